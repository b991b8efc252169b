import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMessageTakeBacks } from '../conversation/message-take-back.js';
import type { CardCopyTarget, ThreadMessenger, UndeletedMessages } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { postMissingCopies } from './post-card-copies.js';

const logger = pino({ level: 'silent' });
const APPROVALS = 'C0APPROVALS';

/**
 * 5e70a48 says a copy whose record failed "(Redis out for that write)" is taken back, and that with the
 * record unreadable "nothing is deleted before the store says the copy is not on record". When Redis is
 * out, though, the kept take-back cannot be kept either (scheduleTakeBack fails too), and the process's
 * own tries (1 + 2 + 4 s) read the record only while Redis is still out: the copy is never removed once
 * Redis answers again (an outage of 30 s, shorter than a Sentinel failover's detection plus promotion).
 */
describe('a copy posted while Redis is out (record, read and keep all failing)', () => {
  it('is taken back once Redis answers again', async () => {
    let clock = 1_000_000;
    const now = () => clock;
    const memory = createMemoryStore({ now });
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { thread: true, channels: [APPROVALS], dmApprovers: false } }) }]);
    const token = (await memory.tryLock(step.threadKey, 60_000))!;
    await memory.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60 * 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
    await memory.setStepCard(step.stepId, 'card-1');

    // Redis goes out just before the copy's record, for 30 s.
    const outUntil = clock + 30_000;
    const out = () => clock < outUntil;
    const unreachable = () => Promise.reject(new Error('Connection is closed.'));
    const store: StateStore = new Proxy(memory, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => (out() ? unreachable() : (value as (...a: unknown[]) => unknown).apply(target, args));
      },
    });

    const inSlack = new Set<string>();
    const messenger = {
      async postStepCopy({ target }: { target: CardCopyTarget }) {
        inSlack.add('copy-1');
        return { kind: target.kind, channel: target.kind === 'channel' ? target.channel : 'D1', ts: 'copy-1' };
      },
      async deleteMessages({ ts }: { ts: readonly string[] }): Promise<UndeletedMessages> {
        for (const each of ts) inSlack.delete(each);
        return { ts: [] };
      },
    } as unknown as ThreadMessenger;
    const takeBacks = createMessageTakeBacks({ store, messenger, logger, now, pause: async (ms) => void (clock += ms) });

    expect(await postMissingCopies({ store, messenger, takeBacks, logger, step })).toBe(0);
    // The copy is not on record (the record never landed) ...
    clock = outUntil + 1_000;
    expect((await store.getStep(step.stepId))?.copies ?? []).toEqual([]);
    // ... and Redis answers again: the sweeps run for a while, as every process's would.
    for (let sweep = 0; sweep < 100; sweep += 1) {
      clock += 60_000;
      await takeBacks.retryDue();
    }
    expect([...inSlack], 'the unrecorded copy (live buttons, never updated) is still in #approvals').toEqual([]);
  });
});
