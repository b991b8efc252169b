import type { Logger } from 'pino';
import { NEWER_RELEASE_CLICK_TEXT } from '../../approvals/decide-call.js';
import { type CallLookup, findCall } from '../../approvals/find-call.js';
import { noMetrics } from '../../metrics/metrics.js';
import { createStoreWait } from '../../approvals/store-wait.js';
import { isNewerSchemaError } from '../../store/newer-schema-error.js';
import type { StateStore } from '../../store/state-store.js';

/** Nothing was read, so nothing was decided: trying again is always safe. */
export const UNREADABLE_CALL_TEXT = ':warning: I could not read this request just now, so nothing changed. Please try again.';

/** A lookup, or the store could not be asked: then the person is told `message` and nothing changes. */
export type ReadCallLookup = CallLookup | UnreadableCall;
type UnreadableCall = { open: false; unreadable: true; step?: undefined; call?: undefined; message: string };

/** The store could not be asked: the call's state is unknown, not closed. */
export function isUnreadable(lookup: ReadCallLookup | undefined): lookup is UnreadableCall {
  return lookup !== undefined && 'unreadable' in lookup;
}

/**
 * The call a click or a form submit refers to, read for a person waiting on the answer. While Redis
 * is unavailable the read is tried again until `storeWaitMs` has passed (a click whose ack Slack
 * already has can wait out a reconnect; a submit or a modal's trigger cannot), as a decision's reads
 * are. A failure is an answer to give the person, never a rejection: Bolt would only log it, and
 * the person would be left with a click that did nothing or a form that hangs.
 */
export async function readCall(options: { store: StateStore; logger: Logger; reference: { stepId: string; approvalId: string }; storeWaitMs?: number }): Promise<ReadCallLookup> {
  const { store, logger, reference } = options;
  const { whileStoreReturns } = createStoreWait({ logger, metrics: noMetrics });
  try {
    return await whileStoreReturns(() => findCall(store, reference), { stepId: reference.stepId, waitUntil: Date.now() + (options.storeWaitMs ?? 0) });
  } catch (error) {
    logger.error({ event: 'click-store-failed', stepId: reference.stepId, err: error }, 'could not read the request a click refers to');
    return { open: false, unreadable: true, message: isNewerSchemaError(error) ? NEWER_RELEASE_CLICK_TEXT : UNREADABLE_CALL_TEXT };
  }
}
