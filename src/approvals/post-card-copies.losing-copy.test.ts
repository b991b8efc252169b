import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMessageTakeBacks } from '../conversation/message-take-back.js';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { postMissingCopies } from './post-card-copies.js';

const logger = pino({ level: 'silent' });
const APPROVALS = 'C0APPROVALS';

/**
 * A copy that lost its record to another process's copy in the same channel is removed through the
 * kept take-backs: when chat.delete fails for now (Slack 503, a rate limit), a later try removes it,
 * so it does not stay in #approvals with live buttons nobody updates.
 */
describe('a losing copy whose delete Slack fails once', () => {
  it('is removed by a later try', async () => {
    let clock = 1_000_000;
    const now = () => clock;
    const store = createMemoryStore({ now });
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { thread: false, channels: [APPROVALS], dmApprovers: false } }) }]);
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 7 * 24 * 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });
    await store.setStepCard(step.stepId, 'card-1');
    const stale = (await store.getStep(step.stepId))!;
    // Another process (an escalation hop, a recorded edit's copies) recorded its copy in #approvals first.
    await store.recordCardCopy(step.stepId, { kind: 'channel', channel: APPROVALS, ts: 'copy-other' });

    const inSlack = new Set<string>(['copy-other']);
    let deleteFailures = 1;
    const messenger = {
      async postStepCopy({ target }: { target: CardCopyTarget }) {
        const channel = target.kind === 'channel' ? target.channel : `D-${target.userId}`;
        inSlack.add('copy-mine');
        return { kind: target.kind, channel, ts: 'copy-mine' };
      },
      async deleteMessages({ ts }: { channel: string; ts: readonly string[] }) {
        if (deleteFailures > 0) {
          deleteFailures -= 1;
          return { ts: [...ts] };
        }
        for (const each of ts) inSlack.delete(each);
        return { ts: [] };
      },
    } as unknown as ThreadMessenger;

    const takeBacks = createMessageTakeBacks({ store, messenger, logger, now, pause: async (ms) => void (clock += ms) });
    await postMissingCopies({ store, messenger, takeBacks, logger, step: stale });
    // Whatever the process or any sweep keeps for later: Slack answers again.
    for (let i = 0; i < 3; i += 1) {
      clock += 3_600_000;
      await takeBacks.retryDue();
    }
    expect({ recorded: (await store.getStep(step.stepId))?.copies?.map((copy) => copy.ts), inSlack: [...inSlack] }).toEqual({ recorded: ['copy-other'], inSlack: ['copy-other'] });
  });
});
