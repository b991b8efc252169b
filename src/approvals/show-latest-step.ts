import type { Logger } from 'pino';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import type { StepStore } from '../store/state-store.js';
import type { PendingStep } from './pending-step.js';
import { showStep } from './show-step.js';

/**
 * Shows the step (`showStep`: its card, if one is on record, and its copies), then reads it again and
 * shows it again while its record differs from what was drawn, so whoever draws last draws the step
 * as it stands. An update of an older revision may land after a newer one's; and the card's ts and
 * its copies are recorded outside the revision (`step-record.ts`): a copy recorded while a decision
 * was being judged is missing from the step the decision wrote, and would keep "waiting" and live
 * buttons for good, the step being final, unless the decision's drawer reads it here. It ends: every
 * round needs a newer revision, another card or another copy, of which a step has few.
 */
export async function showLatestStep({
  store,
  messenger,
  step,
  logger,
}: {
  store: Pick<StepStore, 'getStep'>;
  messenger: Pick<ThreadMessenger, 'updateStepCard' | 'updateStepCopy'>;
  step: PendingStep;
  logger: Logger;
}): Promise<void> {
  let rendered = step;
  for (;;) {
    await showStep({ messenger, step: rendered, logger });
    const latest = await store.getStep(rendered.stepId);
    if (latest === undefined || (latest.revision <= rendered.revision && latest.cardTs === rendered.cardTs && !hasCopyNotIn(latest, rendered))) return;
    rendered = latest;
  }
}

/** Whether `latest` has a copy `drawn` did not: copies are only added (the first recorded per channel), never changed. */
function hasCopyNotIn(latest: PendingStep, drawn: PendingStep): boolean {
  const known = new Set((drawn.copies ?? []).map((copy) => `${copy.channel}:${copy.ts}`));
  return (latest.copies ?? []).some((copy) => !known.has(`${copy.channel}:${copy.ts}`));
}
