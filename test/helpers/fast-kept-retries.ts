import { KEPT_RETRIES, type KeptRetrySchedule } from '../../src/conversation/kept-retries.js';

/**
 * `KEPT_RETRIES` at a tenth (or so) of its pauses, for tests that wait a kept take-back or card
 * redraw out: the same shape (three own tries with doubling pauses, then the sweep), in a few
 * seconds instead of fifteen. The own tries still fit well within `ownLastTryMs` on a loaded machine,
 * each with the Slack client's own retries (about a second).
 */
export const FAST_KEPT_RETRIES: KeptRetrySchedule = {
  ...KEPT_RETRIES,
  ownPausesMs: [100, 200, 400],
  ownLastTryMs: 4_000,
  ownTriesMs: 5_000,
  sweepPauseMinMs: 500,
  sweepPauseMaxMs: 5_000,
};
