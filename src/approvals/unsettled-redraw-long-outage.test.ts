import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { parseConfigFile } from '../config/config-file.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createCardRefreshes } from './card-refreshes.js';
import { createCallDecider } from './decide-call.js';
import type { PendingStep } from './pending-step.js';
import { makeStep } from './pending-step.test-support.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';

const config = parseConfigFile(
  `
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      approvers: [U0ALICE, U0BOB]
      required: 2
`,
  'test.yml',
);
const logger = pino({ level: 'silent' });

/** KEPT_RETRIES scaled down 100x (production: own tries within 10 s, kept refreshes the sweep's after 15 s). */
const SCHEDULE = { ownPausesMs: [10, 20, 40], ownLastTryMs: 100, ownTriesMs: 150, sweepPauseMinMs: 50, sweepPauseMaxMs: 9_000, giveUpAfterMs: 864_000, batch: 20 };

/**
 * Alice's first approval of two lands in Redis, its reply is lost and Redis stays unreachable past her
 * click's wait (a Sentinel failover: down-after-milliseconds is 30 s by default). She is told "The card
 * will show the outcome once Redis answers again". The redraw's refresh record cannot be kept (Redis is
 * unreachable) and its own tries end within seconds: once Redis answers again, nothing draws the card,
 * which keeps showing no approval until someone else changes the step.
 */
describe('an unsettled decision during an outage longer than the redraw\'s own tries', () => {
  it('has its card drawn once Redis answers again, as the approver was promised', async () => {
    const audit = createMemoryAuditLog({ logger });
    const base = createMemoryStore({ audit });
    let down = false;
    const unavailable = () => new Error('Connection is closed.');
    const guarded = new Proxy(base, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (down) throw unavailable();
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (property === 'commitStep' || property === 'commitStepAndQueue') {
            // Written; the reply is lost and Redis becomes unreachable.
            down = true;
            throw unavailable();
          }
          return result;
        };
      },
    }) as StateStore;

    const shown: PendingStep[] = [];
    const messenger = {
      updateStepCard: async ({ step }: { step: PendingStep }) => void shown.push(step),
      updateStepCopy: async () => {},
      postStepCard: async () => ({ ts: '9.9' }),
      findPostedCard: async () => undefined,
      permalinkOf: async () => undefined,
      postNotice: async () => {},
    } as unknown as ThreadMessenger;
    const cardRefreshes = createCardRefreshes({ store: guarded, messenger, takeBacks: { takeBack: async () => {} }, logger, schedule: SCHEDULE });
    const decider = createCallDecider({
      store: guarded,
      messenger,
      worker: { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'drain', lockTtlMs: 60_000 }, drainClaimed: async () => {} },
      logger,
      audit,
      resolveGroups: async () => new Map(),
      evaluateInput: async ({ call, input }) => evaluatePolicy({ policy: config.policy, toolName: call.toolName, channel: 'C0OPS', input }),
      cardRefreshes,
    });

    const step = makeStep([{ approvalId: 'apv1', input: { namespace: 'staging' }, policy: evaluatePolicy({ policy: config.policy, toolName: 'restart_service', channel: 'C0OPS', input: {} }) }], { requesterId: 'U0REQUESTER', createdAt: Date.now() });
    step.calls[0]!.toolName = 'restart_service';
    const token = (await base.tryLock(step.threadKey, 60_000))!;
    await base.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
    await base.releaseLockIfIdle({ threadKey: step.threadKey, token }, 60_000);
    await base.setStepCard(step.stepId, '1.1');

    const outcome = await decider.record(
      { stepId: step.stepId, approvalId: 'apv1', userId: 'U0ALICE', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } },
      { storeWaitMs: 100 },
    );
    expect(outcome.recorded === false && outcome.message).toContain('The card will show the outcome once Redis answers again');
    await decider.publish(outcome);

    // Redis answers again; the sweeps run (every process's, as often as they like).
    // Sweeps until the card shows the recorded decision, or a deadline (a barrier, not a fixed number of sweeps).
    down = false;
    const drawn = () => shown.some((card) => card.revision === step.revision + 1);
    for (const deadline = Date.now() + 10_000; !drawn() && Date.now() < deadline; ) {
      await cardRefreshes.retryDue();
      await new Promise((resolve) => setTimeout(resolve, SCHEDULE.sweepPauseMinMs));
    }
    const stored = (await base.getStep(step.stepId))!;
    expect(stored.revision, 'the approval landed').toBe(step.revision + 1);
    expect(shown.map((card) => card.revision), 'the card was never drawn again after Redis came back').toContain(stored.revision);
  }, 20_000);
});
