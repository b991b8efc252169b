import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, nextTs, TEAM_ID, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * A hole in b041c2e: a streamed answer records its message ts with an unnamed save
 * (live-answer.ts `onMessages` → scope.save). When that save landed but its reply was lost, ioredis
 * sends it again on its new connection; if another process took the thread meanwhile the resend is
 * refused as fenced, the lease is lost, and run-and-publish removes "the stream's messages the thread
 * has no record of" — the message whose ts the landed save DID record. The process that took the
 * thread over reads that record and rewrites the same message with its own answer (`replacing`), so
 * the stalled process deletes the new holder's answer: the thread ends with no answer at all.
 *
 * Modelled as a network cut of the doomed bot's store: the answerTs save lands, then every command of
 * that store waits until released (its lock lapses; the replica takes the item over and answers),
 * then the client's resend of the save reaches Redis.
 */
const harness = useHarnesses();

describe("a streamed answer's ts save that landed, whose reply was lost and whose resend was fenced", () => {
  it("does not delete the answer the thread's new holder showed in that message", async () => {
    const control = { stalling: false, reached: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return new Proxy(store, {
        get(target, property) {
          const value = (target as unknown as Record<PropertyKey, unknown>)[property];
          if (typeof value !== 'function' || property === 'close') return value;
          return async (...args: unknown[]) => {
            const call = () => (value as (...parameters: unknown[]) => Promise<unknown>).apply(target, args);
            const thread = args[0] as { answerTs?: string[]; outbox?: string } | undefined;
            if (property === 'saveThread' && !control.stalling && thread?.answerTs?.length && thread.outbox === undefined) {
              // The save of the answer's message ts lands; its reply is lost; the connection is down.
              await call();
              control.stalling = true;
              control.reached.resolve();
              await control.released.promise;
              // ioredis's resend on its new connection.
              return call();
            }
            if (control.stalling) await control.released.promise;
            return call();
          };
        },
      });
    };
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore });
    await h.startReplica();

    const answerA = `First try: ${Array.from({ length: 30 }, (_, index) => `word${index}`).join(' ')}`;
    const answerB = 'The worker in staging is healthy and all twelve pods report ready.';
    let requests = 0;
    h.openai.setResponder(() => {
      requests += 1;
      return requests === 1 ? { text: answerA, deltaDelayMs: 100 } : { text: answerB, deltaDelayMs: 60 };
    });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'how is the worker?', ts: threadTs });
    await control.reached.promise;

    // The replica takes the item over once the lock lapses, runs the turn again and shows its answer
    // in the message the stored thread names.
    const reader = createRedisStore({ url: inject('redisUrl'), keyPrefix: h.keyPrefix });
    try {
      await waitFor(
        async () => {
          const stored = await reader.getThread(`${TEAM_ID}:${CHANNEL}:${threadTs}`);
          const last = stored?.messages.at(-1);
          return stored?.outbox === undefined && last?.role === 'assistant' && JSON.stringify(last.content).includes('twelve pods') && threadReplies(h, threadTs).some((message) => message.text === answerB);
        },
        { timeoutMs: 20_000, message: "the replica's answer, shown and recorded" },
      );
    } finally {
      await reader.close();
    }
    expect(threadReplies(h, threadTs).map((message) => message.text)).toContain(answerB);

    control.released.resolve();
    await waitFor(() => h.warnings().some((line) => line.includes('"event":"thread-fenced"')), { timeoutMs: 15_000, message: 'the stalled process to find itself fenced' });
    await h.settled();
    const texts = threadReplies(h, threadTs).map((message) => message.text);
    expect(texts, `the only answer in the thread was deleted by the fenced process; chat.delete calls: ${JSON.stringify(h.slack.callsTo('chat.delete').map((call) => call.args.ts))}`).toContain(answerB);
  }, 60_000);
});

