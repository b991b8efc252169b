import type { Logger } from 'pino';
import { keepCardRefresh } from '../approvals/card-refreshes.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { StateStore } from '../store/state-store.js';
import { refreshCard } from './refresh-card.js';
import type { TurnScope } from './turn-scope.js';

/**
 * When the sweep draws the card itself: well after the write and the writer's own update of the card
 * (a round trip each), so it does not draw the step as it was before the write. A writer stopped
 * longer than that before its write is fenced out of it once another holder took the thread, or
 * shows the card itself once it writes.
 */
export const SWEEP_SHOWS_AFTER_MS = 10_000;

/**
 * Runs `write`, which changes a step the card must then show and returns it as written (undefined:
 * nothing was written), and shows it on the card (`refreshCard`), with a card refresh kept for the
 * sweep (`CardRefreshes.retryDue`) from before the write until the card is shown. A process that
 * stops between the two (a crash, or a GC pause or frozen VM past its lock, its card update then
 * refused as fenced) would otherwise leave the card saying what the step no longer says ("Approved
 * by …" of a call closed unrun) for good: whoever takes its work over finds nothing left to show.
 * Kept before the write (which cannot record it), due `SWEEP_SHOWS_AFTER_MS` later: whatever this
 * process does, the sweep draws the step as stored then. A refresh that cannot be kept (Redis
 * failing, when the write will likely fail too) leaves the card to this process, as before.
 */
export async function writeThenShowCard(
  { scope, store, stepId, logger, now }: { scope: Pick<TurnScope, 'messenger'>; store: Pick<StateStore, 'getStep' | 'scheduleCardRefresh' | 'forgetCardRefresh'>; stepId: string; logger: Logger; now: () => number },
  write: () => Promise<PendingStep | undefined>,
): Promise<void> {
  const refresh = { stepId, since: now() };
  const kept = await keepCardRefresh({ store, refresh, at: refresh.since + SWEEP_SHOWS_AFTER_MS, logger, unkept: 'could not keep a card refresh before a step write; only this process shows the card' });
  const written = await write();
  if (written) return refreshCard({ scope, step: written, logger, store, now, ...(kept ? { kept: refresh } : {}) });
  // Nothing changed: nothing to show.
  if (kept) await store.forgetCardRefresh(refresh).catch(() => false);
}

/**
 * Has the sweep draw the step once more, `SWEEP_SHOWS_AFTER_MS` from now: for a writer of a step
 * whose card another process may still be drawing in an older state, with no read after its draw
 * (a decision's draw of a decided step, `mayChangeUnseen`), which would land over this writer's own
 * draw. Never throws; a refresh the store would not keep leaves the card to this writer's draw.
 */
export async function sweepShowsLater({ store, stepId, logger, now }: { store: Pick<StateStore, 'scheduleCardRefresh'>; stepId: string; logger: Logger; now: () => number }): Promise<void> {
  const since = now();
  await keepCardRefresh({ store, refresh: { stepId, since }, at: since + SWEEP_SHOWS_AFTER_MS, logger, unkept: 'could not keep a card refresh after a write another draw may land over; only this process shows the card' });
}
