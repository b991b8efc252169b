import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createChannelMembership } from './channel-membership.js';

/** `users.conversations` answering with the channels in `current`, counting its calls; `fail` makes it throw. */
function fakeClient() {
  const state = { current: ['C1'], calls: 0, fail: false };
  const client = {
    users: {
      conversations: async () => {
        state.calls += 1;
        if (state.fail) throw new Error('ratelimited');
        return { channels: state.current.map((id) => ({ id })), response_metadata: {} };
      },
    },
  };
  return { state, channelsOf: createChannelMembership({ client: client as never, logger: pino({ level: 'silent' }) }) };
}

describe('the channels a person is in', () => {
  it('answers from the cache, and from Slack when asked fresh (a grant checked at the gate)', async () => {
    const { state, channelsOf } = fakeClient();
    expect(await channelsOf('UBOB')).toEqual(new Set(['C1']));
    state.current = [];
    expect(await channelsOf('UBOB')).toEqual(new Set(['C1']));
    expect(await channelsOf('UBOB', { fresh: true })).toEqual(new Set());
    expect(state.calls).toBe(2);
  });

  it('shares a read under way between callers asking at once', async () => {
    const { state, channelsOf } = fakeClient();
    const answers = await Promise.all([channelsOf('UBOB', { fresh: true }), channelsOf('UBOB', { fresh: true })]);
    expect(answers).toEqual([new Set(['C1']), new Set(['C1'])]);
    expect(state.calls).toBe(1);
  });

  it('says nothing when Slack does not answer, and asks again next time', async () => {
    const { state, channelsOf } = fakeClient();
    state.fail = true;
    expect(await channelsOf('UBOB', { fresh: true })).toBeUndefined();
    state.fail = false;
    expect(await channelsOf('UBOB')).toEqual(new Set(['C1']));
    expect(state.calls).toBe(2);
  });
});
