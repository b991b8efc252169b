import { SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { contextFromTraceparent, countersignTracer, inSpan, markFailed } from '../tracing/trace-context.js';
import type { AuditLog } from '../audit/audit-log.js';
import { type Metrics, noMetrics } from '../metrics/metrics.js';
import { isFencedError } from '../store/fenced-error.js';
import { isNewerSchemaError } from '../store/newer-schema-error.js';
import type { PrefetchedStep } from '../store/state-store.js';
import { newStepId } from '../store/redis-keys.js';
import { createCloseInterruptedCalls } from './close-interrupted-calls.js';
import { createMessageHandler } from './handle-message.js';
import { leaveItemToNewerRelease } from './newer-release-item.js';
import type { Lease } from './lease.js';
import type { MessageTakeBacks } from './message-take-back.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import { createStepResumer } from './resume-step.js';
import { createRetryFailedTurn } from './retry-failed-turn.js';
import { createRunAndPublish } from './run-and-publish.js';
import { shortError } from './short-error.js';
import { postStateLostNotice } from './state-lost-notice.js';
import { createStepCards } from './step-card.js';
import type { ThreadMessenger } from './thread-messenger.js';
import type { ItemEnd } from './thread-worker.js';
import { createMessageThreadLoader, createThreadLoader } from './thread-loader.js';
import { createTurnScope } from './turn-scope.js';
import { workItemKey, type WorkItem } from './work-item.js';

export interface ConversationLimits {
  maxSteps: number;
  /** Per model call; a server that hangs fails the turn (after retries) instead of the thread waiting forever. */
  modelTimeoutMs?: number;
  historyTtlMs: number;
  maxMessages: number;
  maxBytes: number;
}

export type ConversationOptions = Omit<PhaseDependencies, 'limits' | 'now' | 'newStepId' | 'audit' | 'metrics' | 'tracer'> & {
  /** The Slack side; each work item uses it through its lease (see `fencedMessenger`). */
  messenger: ThreadMessenger;
  limits: ConversationLimits;
  audit: AuditLog;
  now?: () => number;
  newStepId?: () => string;
  metrics?: Metrics;
  /** Default: the global tracer provider's (a no-op until an OpenTelemetry SDK registers). */
  tracer?: Tracer;
  /** How a fenced item removes what it posted and never recorded; its sweep (`retryDue`) runs elsewhere. */
  takeBacks: Pick<MessageTakeBacks, 'takeBack'>;
};

export interface Conversation {
  /**
   * Handles one queued item while the caller holds the thread; every effect goes through `lease`.
   * Returns the item's last thread save (and what to take back should it never be written), for
   * the caller to send with the queue's finish.
   */
  handle(item: WorkItem, lease: Lease, prefetched?: PrefetchedStep): Promise<ItemEnd | undefined>;
}

/**
 * Wires the phases of a thread's work (handle a message, resume a decided step, retry a failed
 * turn; each runs and publishes a turn) and runs one queued item under its lease.
 */
export function createConversation(options: ConversationOptions): Conversation {
  const { store, logger, limits } = options;
  const tracer = options.tracer ?? countersignTracer();
  const dependencies: PhaseDependencies = {
    ...options,
    tracer,
    now: options.now ?? Date.now,
    newStepId: options.newStepId ?? newStepId,
    metrics: options.metrics ?? noMetrics,
  };
  const loadThread = createThreadLoader(dependencies);
  const closeInterruptedCalls = createCloseInterruptedCalls(dependencies);
  const cards = createStepCards(dependencies);
  // The resumer runs and publishes, and a step the approval hook decided entirely is resumed at once.
  const runAndPublish = createRunAndPublish({ ...dependencies, cards, resumeDecided: (scope, stepId, soFar) => resumer.resume(scope, stepId, undefined, soFar) });
  const phases = { loadThread, closeInterruptedCalls, runAndPublish };
  const resumer = createStepResumer({ ...dependencies, ...phases, cards });
  const handleMessage = createMessageHandler({ ...dependencies, ...phases, loadMessageThread: createMessageThreadLoader(dependencies), cards, resumer });
  const retry = createRetryFailedTurn({ ...dependencies, ...phases, cards, resumer });

  return {
    handle: (item, lease, prefetched) =>
      // The item continues the trace of whatever queued it: the Slack event, or the decision that completed a step.
      inSpan({ tracer, name: 'countersign.turn', kind: SpanKind.CONSUMER, parent: contextFromTraceparent(item.traceparent), attributes: { 'countersign.work.kind': item.kind, 'countersign.channel': item.channel, 'countersign.thread_ts': item.threadTs } }, async (traceContext) => {
        const scope = createTurnScope({ store, messenger: options.messenger, lease, limits, now: dependencies.now, traceContext, itemKey: workItemKey(item), takeBacks: options.takeBacks });
        // Redis lost the thread under the item: nothing is left to save, and the thread hears why.
        const stateLost = async () => {
          await postStateLostNotice({ store, messenger: options.messenger, lease, where: { channel: item.channel, threadTs: item.threadTs }, executions: scope.executions, logger });
          return undefined;
        };
        try {
          if (item.kind === 'message') await handleMessage(scope, item);
          else if (item.kind === 'resume') await resumer.resume(scope, item.stepId, prefetched);
          else await retry(scope, item);
        } catch (error) {
          if (lease.stateLost()) return stateLost();
          // Another process holds the thread now: stop here, with nothing more said or saved.
          if (isFencedError(error) || lease.lost()) throw error;
          // Stored by a newer release: left as it is, not taken for gone.
          if (isNewerSchemaError(error)) {
            await leaveItemToNewerRelease({ scope, item, error, logger }).catch(() => {});
            return scope.takeItemEnd();
          }
          // Usually the store or Slack failing mid-turn: say so in the thread rather than go quiet.
          logger.error({ event: 'work-item-failed', kind: item.kind, err: error }, 'could not handle work item');
          const span = trace.getSpan(traceContext);
          if (span) markFailed(span, error);
          await scope.messenger
            .postNotice({
              channel: item.channel,
              threadTs: item.threadTs,
              text: `:warning: Something went wrong on my side (${shortError(error)}), so I stopped here and nothing further was run. Please try again in a moment.`,
            })
            .catch(() => {});
        }
        // Found after the item's last write (a renewal, or the item caught the refusal itself).
        if (lease.stateLost()) return stateLost();
        return scope.takeItemEnd();
      }),
  };
}
