import { Writable } from 'node:stream';
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
 * will show the outcome once Redis answers again". `now`: the card refreshes' clock. `offered`: how often the
 * refresh record was offered to the unreachable store.
 */
async function clickDuringOutage({ now, logger: log = logger }: { now?: () => number; logger?: typeof logger } = {}) {
  const audit = createMemoryAuditLog({ logger });
  const base = createMemoryStore({ audit });
  const outage = { down: false, offered: 0 };
  const unavailable = () => new Error('Connection is closed.');
  const guarded = new Proxy(base, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (outage.down) {
          if (property === 'scheduleCardRefresh') outage.offered += 1;
          throw unavailable();
        }
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (property === 'commitStep' || property === 'commitStepAndQueue') {
          // Written; the reply is lost and Redis becomes unreachable.
          outage.down = true;
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
  const cardRefreshes = createCardRefreshes({ store: guarded, messenger, takeBacks: { takeBack: async () => {} }, logger: log, schedule: SCHEDULE, ...(now ? { now } : {}) });
  const decider = createCallDecider({
    store: guarded,
    messenger,
    worker: { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'drain', lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} },
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
  expect(outage.down, 'Redis is still unreachable once the click is answered').toBe(true);

  /** Redis answers again; the sweeps run (every process's, as often as they like) until the card shows the recorded decision, or a deadline. */
  const answerAgain = async () => {
    outage.down = false;
    const drawn = () => shown.some((card) => card.revision === step.revision + 1);
    for (const deadline = Date.now() + 10_000; !drawn() && Date.now() < deadline; ) {
      await cardRefreshes.retryDue();
      await new Promise((resolve) => setTimeout(resolve, SCHEDULE.sweepPauseMinMs));
    }
    const stored = (await base.getStep(step.stepId))!;
    expect(stored.revision, 'the approval landed').toBe(step.revision + 1);
    expect(shown.map((card) => card.revision), 'the card was never drawn again after Redis came back').toContain(stored.revision);
  };
  return { outage, answerAgain };
}

describe('an unsettled decision during an outage longer than the redraw\'s own tries', () => {
  /**
   * The redraw's refresh record cannot be kept (Redis is unreachable) and its own tries end within
   * seconds: once Redis answers again, nothing draws the card, which keeps showing no approval until
   * someone else changes the step.
   */
  it('has its card drawn once Redis answers again, as the approver was promised', async () => {
    const { answerAgain } = await clickDuringOutage();
    await answerAgain();
  }, 20_000);

  /**
   * A primary restart with a big AOF or a network partition: Redis answers again only after 20 minutes
   * (at production scale; the schedule here is 100 times shorter, and the refreshes' clock jumps ahead
   * while Redis is down). The record used to be offered for 5 minutes only: the card then showed the
   * state before the click, its buttons live on a decided step, with nothing left to draw it.
   */
  it('has its card drawn when Redis answers again after an outage of 20 minutes', async () => {
    let skewMs = 0;
    const lines: string[] = [];
    const captured = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }));
    const { outage, answerAgain } = await clickDuringOutage({ now: () => Date.now() + skewMs, logger: captured });
    const fiveMinutesMs = 5 * 60 * 1000 / 100;
    // Four jumps of 5 minutes each, each once the record was offered again since the last (a barrier, with a deadline).
    for (let jump = 0; jump < 4; jump += 1) {
      const offered = outage.offered;
      for (const deadline = Date.now() + 3_000; outage.offered === offered && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 10));
      skewMs += fiveMinutesMs;
    }
    await answerAgain();
    const told = lines.filter((line) => line.includes('"card-refresh-store-still-down"'));
    expect(told, 'the operator is told once that the store has not answered for minutes').toHaveLength(1);
    expect(lines.some((line) => line.includes('"card-refresh-given-up"')), 'not given up within the day').toBe(false);
  }, 30_000);
});
