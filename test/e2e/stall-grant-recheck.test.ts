import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import type { StateStore } from '../../src/store/state-store.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';
import { grantFromCard } from './grant-form.js';
import { deferred } from '../helpers/deferred.js';

/**
 * A call let through on a grant checks the grant again (a Redis read, `listGrants`) after its
 * executing marker, and a command once more after its slot. The process can stall (a GC pause, a
 * frozen VM, a slow Redis) while that read is on its way: its lock lapses, another process takes the
 * thread over, sees the marker and tells the model the call was interrupted. When the stalled
 * process wakes, the grant's reply is what it reads first; nothing checks the lease after it, so
 * the call starts, after this process lost the thread, behind the new holder's back.
 *
 * The stall is modelled with the doomed bot's store: the Nth grant read after arming returns its
 * (already read) reply only once released, and every lock renewal sent meanwhile is held too (a
 * stalled process renews nothing); the replica (same Redis, unwrapped store) is the survivor.
 */
const harness = useHarnesses();
const LOCK_TTL_MS = 1_000;

const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

function stallingStore(control: Control) {
  let built = 0;
  return (store: StateStore): StateStore => {
    built += 1;
    // The replica (built second) has the plain store: it is the process that takes over.
    if (built > 1) return store;
    return {
      ...store,
      async listGrants(options) {
        const grants = await store.listGrants(options);
        if (control.armed) {
          control.lookups += 1;
          if (control.lookups === control.stallAtLookup) {
            // The reply is in; the process stalls before acting on it.
            control.stalling = true;
            control.reached.resolve();
            await control.released.promise;
          }
        }
        return grants;
      },
      async extendLock(fence, ttlMs) {
        if (control.stalling) {
          await control.released.promise;
          // The renewal goes out when the process wakes; its reply comes after the grant's, already read,
          // and late enough that a command spawned meanwhile records its run before the lost lease kills it.
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        return store.extendLock(fence, ttlMs);
      },
    };
  };
}

interface Control {
  armed: boolean;
  lookups: number;
  stallAtLookup: number;
  stalling: boolean;
  reached: ReturnType<typeof deferred>;
  released: ReturnType<typeof deferred>;
}

const newControl = (stallAtLookup: number): Control => ({ armed: false, lookups: 0, stallAtLookup, stalling: false, reached: deferred(), released: deferred() });

/** First call: a card, granted for the channel (it runs once). Returns once that turn is settled. */
async function grantOnce(h: Harness, call: { name: string; arguments: Record<string, unknown> }, answer: string) {
  h.openai.enqueue({ toolCalls: [call] }, { text: answer });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'do it', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  await grantFromCard(h, { card, threadTs, scope: 'channel' });
  await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === answer), { message: 'first answer' });
  await h.settled();
}

/** Second call, covered by the grant: the doomed process stalls at the chosen grant read, the replica takes over. */
async function stallAndTakeOver(h: Harness, control: Control, call: { name: string; arguments: Record<string, unknown> }, answer: string, ranSoFar: () => number) {
  control.armed = true;
  h.openai.enqueue({ toolCalls: [call] }, { text: answer });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'do it again', ts: threadTs });
  await control.reached.promise;
  // The stall came after the call's marker was written (its tool-started is in the audit trail).
  const started = (await h.auditEvents()).filter((event) => event.type === 'tool-started' && (event as { threadTs?: string }).threadTs === threadTs);
  expect(started).toHaveLength(1);
  // The replica takes the thread once the lock lapses, and answers: the call was interrupted.
  await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'the answer from the process that took over' });
  const told = conversationOf(h.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
  expect(told).toMatch(/Interrupted|may or may not have/);
  // Nothing ran the second time so far: only the first, granted, call.
  expect(ranSoFar()).toBe(1);
  // Now the stalled process wakes.
  control.released.resolve();
  await h.settled();
  return threadTs;
}

describe('a process that stalls while re-checking the grant of a call it already marked as started', () => {
  it('command tool, control (stall in the grant check right after the marker): the lease check before the spawn refuses it', async () => {
    const control = newControl(3);
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: String(LOCK_TTL_MS) }, sweepIntervalMs: 100, wrapStore: stallingStore(control) });
    await h.startReplica();
    await grantOnce(h, restart, 'Restarted once.');
    await stallAndTakeOver(h, control, restart, 'The restart was interrupted; I will not repeat it.', () => h.invocations().length);
    expect(h.invocations()).toHaveLength(1);
  }, 60_000);

  it('command tool (stall in the grant check after the command slot): the command must not start after another process took the thread', async () => {
    const control = newControl(4);
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: String(LOCK_TTL_MS) }, sweepIntervalMs: 100, wrapStore: stallingStore(control) });
    await h.startReplica();
    await grantOnce(h, restart, 'Restarted once.');
    expect(h.invocations()).toHaveLength(1);

    await stallAndTakeOver(h, control, restart, 'The restart was interrupted; I will not repeat it.', () => h.invocations().length);
    // The process that took over did not run it; neither may the one that lost the thread.
    expect(h.invocations()).toHaveLength(1);
  }, 60_000);

  describe('http_request', () => {
    let api: Server;
    let origin: string;
    const received: string[] = [];
    beforeAll(async () => {
      api = createServer((request, response) => {
        received.push(`${request.method} ${request.url}`);
        response.setHeader('content-type', 'application/json');
        response.end('{"ok":true}');
      });
      await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
      const address = api.address() as { port: number };
      origin = `http://127.0.0.1:${address.port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => api.close(resolve));
    });

    it('(stall in the grant check right after the marker): the request must not be sent after another process took the thread', async () => {
      const control = newControl(3);
      const extraYaml = `http:\n  timeoutSeconds: 5\n  bases:\n    - url: ${origin}/api/\n`;
      const h = await harness({ extraYaml, environment: { COUNTERSIGN_LOCK_TTL_MS: String(LOCK_TTL_MS) }, sweepIntervalMs: 100, wrapStore: stallingStore(control) });
      await h.startReplica();
      const deploy = { name: 'http_request', arguments: { method: 'POST', url: `${origin}/api/deploys`, body: '{"version":"1.4.2"}' } };
      await grantOnce(h, deploy, 'Deploy requested once.');
      expect(received).toEqual(['POST /api/deploys']);

      await stallAndTakeOver(h, control, deploy, 'The deploy request was interrupted; I will not repeat it.', () => received.length);
      expect(received).toEqual(['POST /api/deploys']);
    }, 60_000);
  });
});
