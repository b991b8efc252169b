import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createMessageTakeBacks } from './message-take-back.js';
import type { UndeletedMessages } from './thread-messenger.js';

const HOUR = 60 * 60 * 1000;
const threadKey = 'T1:C1:1.1';

/**
 * Take-backs over a Slack that refuses `failures` more deletions (each answered with `retryAfterMs`
 * when set), on a clock that the pauses move: nothing here waits in real time.
 */
function world(options: { failures: number; retryAfterMs?: number; answerTs?: string[] }) {
  let clock = 1_000_000;
  const now = () => clock;
  const store = createMemoryStore({ now });
  const removed: string[] = [];
  const tries: number[] = [];
  let failures = options.failures;
  const messenger = {
    async deleteMessages({ ts }: { ts: readonly string[] }): Promise<UndeletedMessages> {
      tries.push(clock);
      if (failures > 0) {
        failures -= 1;
        return { ts: [...ts], ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }) };
      }
      removed.push(...ts);
      return { ts: [] };
    },
  };
  const pauses: number[] = [];
  const pause = async (ms: number) => {
    pauses.push(ms);
    clock += ms;
  };
  const takeBacks = createMessageTakeBacks({ store, messenger, logger: pino({ level: 'silent' }), now, pause });
  return {
    store,
    takeBacks,
    removed,
    tries,
    pauses,
    advance: (ms: number) => (clock += ms),
    async recordAnswer(ts: string[]) {
      const fence = { threadKey, token: (await store.tryLock(threadKey, 60_000))! };
      await store.saveThread({ ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 0), answerTs: ts }, 60_000, fence);
    },
    kept: () => store.dueTakeBacks({ now: Number.MAX_SAFE_INTEGER, limit: 100 }),
    /** A step whose card is `card-1`, with its copy `copyTs` in #approvals on record when given. */
    async recordStep(copyTs?: string) {
      const step = makeStep(['apv-1']);
      const fence = { threadKey: step.threadKey, token: (await store.tryLock(step.threadKey, 60_000))! };
      await store.createStep({ step, thread: { ...newThreadState(step, 0), pendingStepId: step.stepId }, ttlMs: HOUR, audit: [], fence });
      await store.setStepCard(step.stepId, 'card-1');
      if (copyTs !== undefined) await store.recordCardCopy(step.stepId, { kind: 'channel', channel: 'C0APPROVALS', ts: copyTs });
      return step;
    },
  };
}

describe('taking back messages Slack would not remove at first', () => {
  it('tries again here after a blip, and keeps nothing once they are removed', async () => {
    const w = world({ failures: 2 });
    await w.takeBacks.takeBack({ channel: 'C1', ts: ['m1'], threadKey });
    expect(w.removed).toEqual(['m1']);
    expect(w.pauses).toEqual([1_000, 2_000]);
    expect(await w.kept()).toEqual([]);
  });

  it('keeps what Slack still refuses for the sweep, which removes it once Slack is back', async () => {
    // The first deletion of both, then three tries of each here.
    const w = world({ failures: 7 });
    await w.takeBacks.takeBack({ channel: 'C1', ts: ['m1', 'm2'], threadKey });
    expect(w.removed).toEqual([]);
    expect((await w.kept()).map((kept) => kept.ts)).toEqual(['m1', 'm2']);
    // Not the sweep's while this process may still be trying.
    await w.takeBacks.retryDue();
    expect(w.tries).toHaveLength(7);
    w.advance(15_000);
    await w.takeBacks.retryDue();
    expect(w.removed).toEqual(['m1', 'm2']);
    expect(await w.kept()).toEqual([]);
  });

  it('never removes a message the thread records by the time it is tried again', async () => {
    const w = world({ failures: 1 });
    await w.recordAnswer(['m1']);
    await w.takeBacks.takeBack({ channel: 'C1', ts: ['m1'], threadKey });
    expect(w.tries).toHaveLength(1);
    expect(w.removed).toEqual([]);
    expect(await w.kept()).toEqual([]);
  });

  it("waits out a rate limit's retry-after: longer than its own tries, the sweep tries then", async () => {
    const w = world({ failures: 1, retryAfterMs: 30_000 });
    await w.takeBacks.takeBack({ channel: 'C1', ts: ['m1'], threadKey });
    expect(w.tries).toHaveLength(1);
    w.advance(30_000);
    await w.takeBacks.retryDue();
    expect(w.removed).toEqual(['m1']);
  });

  it('backs off between sweeps and gives up a day after the first failure, keeping nothing', async () => {
    const w = world({ failures: Number.POSITIVE_INFINITY });
    await w.takeBacks.takeBack({ channel: 'C1', ts: ['m1'], threadKey });
    const first = (await w.kept())[0]!;
    for (let sweeps = 0; sweeps < 200 && (await w.kept()).length > 0; sweeps += 1) {
      w.advance(15 * 60 * 1000);
      await w.takeBacks.retryDue();
    }
    expect(await w.kept()).toEqual([]);
    const last = w.tries.at(-1)!;
    expect(last - first.since).toBeGreaterThanOrEqual(24 * HOUR);
    expect(last - first.since).toBeLessThan(25 * HOUR);
    // About one try per sweep pause (doubling up to 15 min), not one per sweep interval.
    expect(w.tries.length).toBeLessThan(24 * 4 + 20);
  });

  it("never removes a copy of a step's card on record by the time it is tried again", async () => {
    const w = world({ failures: 1 });
    const step = await w.recordStep('copy-1');
    await w.takeBacks.takeBack({ channel: 'C0APPROVALS', ts: ['copy-1'], threadKey: step.threadKey, stepId: step.stepId });
    expect(w.tries).toHaveLength(1);
    expect(w.removed).toEqual([]);
    expect(await w.kept()).toEqual([]);
  });

  it('removes nothing whose record is unknown before the store says it is not on record', async () => {
    const onRecord = world({ failures: 0 });
    const recorded = await onRecord.recordStep('copy-1');
    await onRecord.takeBacks.takeBack({ channel: 'C0APPROVALS', ts: ['copy-1'], threadKey: recorded.threadKey, stepId: recorded.stepId, recordUnknown: true });
    expect(onRecord.tries).toEqual([]);
    expect(await onRecord.kept()).toEqual([]);

    const unrecorded = world({ failures: 0 });
    const step = await unrecorded.recordStep();
    await unrecorded.takeBacks.takeBack({ channel: 'C0APPROVALS', ts: ['copy-1'], threadKey: step.threadKey, stepId: step.stepId, recordUnknown: true });
    expect(unrecorded.removed).toEqual(['copy-1']);
    expect(await unrecorded.kept()).toEqual([]);
  });

  it('offers a take-back the store could not keep to it until it answers, then the sweep removes the message', async () => {
    const w = storeOut({ outForMs: 2 * 60_000 });
    await w.takeBacks.takeBack({ channel: 'C1', ts: ['m1'], threadKey, recordUnknown: true });
    expect(w.removed).toEqual([]);
    // Offered in the background, on pauses that move the clock, until the store is back.
    await vi.waitFor(async () => expect(await w.kept()).toHaveLength(1));
    await w.takeBacks.retryDue();
    expect(w.removed).toEqual(['m1']);
    expect(w.logs.filter((line) => line.event === 'take-back-given-up')).toEqual([]);
  });

  it('tells the operator when a take-back could not be kept for a day, without blaming Slack', async () => {
    const w = storeOut({ outForMs: Number.POSITIVE_INFINITY });
    await w.takeBacks.takeBack({ channel: 'C1', ts: ['m1'], threadKey, recordUnknown: true });
    await vi.waitFor(() => expect(w.logs.filter((line) => line.event === 'take-back-given-up')).toHaveLength(1));
    const [givenUp] = w.logs.filter((line) => line.event === 'take-back-given-up');
    expect(givenUp).toMatchObject({ unkept: true, ts: 'm1' });
    expect(givenUp?.msg).not.toMatch(/Slack would not remove/);
    expect(givenUp?.failingMs).toBeGreaterThanOrEqual(24 * HOUR);
    expect(w.logs.filter((line) => line.event === 'take-back-store-still-down')).toHaveLength(1);
  });
});

/** Take-backs over a store that cannot be reached for `outForMs` (Slack removes everything), on a clock that the pauses move. */
function storeOut({ outForMs }: { outForMs: number }) {
  let clock = 1_000_000;
  const now = () => clock;
  const memory = createMemoryStore({ now });
  const outUntil = clock + outForMs;
  const store = new Proxy(memory, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (clock < outUntil ? Promise.reject(new Error('Connection is closed.')) : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  }) as StateStore;
  const removed: string[] = [];
  const messenger = {
    async deleteMessages({ ts }: { ts: readonly string[] }): Promise<UndeletedMessages> {
      removed.push(...ts);
      return { ts: [] };
    },
  };
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const takeBacks = createMessageTakeBacks({ store, messenger, logger: pino(sink), now, pause: async (ms) => void (clock += ms) });
  return { takeBacks, removed, logs, kept: () => memory.dueTakeBacks({ now: Number.MAX_SAFE_INTEGER, limit: 100 }) };
}
