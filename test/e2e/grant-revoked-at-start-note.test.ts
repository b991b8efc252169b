import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { grantFromCard } from './grant-form.js';

const harness = useHarnesses();

const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('a grant revoked as a call starts', () => {
  it('does not announce "ran without a card" for a call the marker write refused', async () => {
    const control = { armed: false, refused: 0 };
    const h = await harness({
      wrapStore: (store: StateStore): StateStore => ({
        ...store,
        markExecuting: async (options) => {
          // The revoke lands after the gate's checks and before the marker's write (the stretch the script closes).
          if (control.armed && options.grant) {
            await store.revokeGrant({ teamId: TEAM_ID, channel: CHANNEL, grantId: options.grant.grantId, audit: (grant) => ({ type: 'grant-revoked', teamId: TEAM_ID, channel: CHANNEL, grantId: grant.grantId, userId: 'UCAROL' }) as never });
          }
          const result = await store.markExecuting(options);
          if (result === 'grant-gone') control.refused += 1;
          return result;
        },
      }),
    });
    h.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted once.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await grantFromCard(h, { card, threadTs, scope: 'channel' });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });
    await h.settled();
    expect(h.invocations()).toHaveLength(1);

    control.armed = true;
    h.openai.enqueue({ toolCalls: [restart] }, { text: 'The grant was revoked, so I did not restart it.' });
    const second = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker again', ts: second });
    await waitFor(() => threadReplies(h, second).some((message) => message.text === 'The grant was revoked, so I did not restart it.'), { timeoutMs: 10_000, message: 'second answer' });
    await h.settled();
    expect(control.refused).toBe(1);
    // Nothing ran the second time…
    expect(h.invocations()).toHaveLength(1);
    // …so the thread must not say it ran.
    const texts = threadReplies(h, second).map((message) => message.text);
    expect(texts.filter((text) => text.includes('ran without a card'))).toEqual([]);
  }, 30_000);
  it('does not announce "ran without a card" for a call refused by the check right after its marker', async () => {
    const control = { armed: false, refused: 0 };
    const h = await harness({
      wrapStore: (store: StateStore): StateStore => ({
        ...store,
        markExecuting: async (options) => {
          // The revoke lands right after the marker's write: the check after it refuses the start.
          const result = await store.markExecuting(options);
          if (control.armed && options.grant && result === 'marked') {
            control.refused += 1;
            await store.revokeGrant({ teamId: TEAM_ID, channel: CHANNEL, grantId: options.grant.grantId, audit: (grant) => ({ type: 'grant-revoked', teamId: TEAM_ID, channel: CHANNEL, grantId: grant.grantId, userId: 'UCAROL' }) as never });
          }
          return result;
        },
      }),
    });
    h.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted once.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await grantFromCard(h, { card, threadTs, scope: 'channel' });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });
    await h.settled();
    expect(h.invocations()).toHaveLength(1);

    control.armed = true;
    h.openai.enqueue({ toolCalls: [restart] }, { text: 'The grant was revoked, so I did not restart it.' });
    const second = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker again', ts: second });
    await waitFor(() => threadReplies(h, second).some((message) => message.text === 'The grant was revoked, so I did not restart it.'), { timeoutMs: 10_000, message: 'second answer' });
    await h.settled();
    expect(control.refused).toBe(1);
    // Nothing ran the second time…
    expect(h.invocations()).toHaveLength(1);
    // …so the thread must not say it ran.
    const texts = threadReplies(h, second).map((message) => message.text);
    expect(texts.filter((text) => text.includes('ran without a card'))).toEqual([]);
  }, 30_000);
});
