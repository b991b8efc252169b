import { pino } from 'pino';
import { expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { SlackCallError } from '../errors/countersign-error.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createCardRefreshes, keepCardToRedraw } from './card-refreshes.js';
import { openStep, stepRoutedTo } from './card-refreshes.test-support.js';
import type { CardCopy, PendingStep } from './pending-step.js';
import { showStep } from './show-step.js';

const logger = pino({ level: 'silent' });
const APPROVALS = 'C0APPROVALS';

/**
 * c4c3aff: a copy whose update Slack failed for now is thrown by showStep so "each caller keeps the step to
 * draw again" (`keepCardToRedraw`). But a step with copies and no thread card on record (its first card
 * unconfirmed, 0cc8d1b/8dafddb, or its ts unrecorded) is ended by the sweep as 'gone' ("never posted: whoever
 * posts it shows the step as it is then"): the copy is never drawn again. Here the expiry's draw of the copy got
 * a 503: the #approvals copy keeps "waiting" with live buttons on an expired request.
 */
it('a copy whose update failed for now is drawn again even when the step records no thread card', async () => {
  let clock = 1_000_000;
  const now = () => clock;
  const store = createMemoryStore({ now });
  const step = stepRoutedTo({ thread: true, channels: [APPROVALS] });
  await openStep(store, step, 7 * 24 * 3_600_000);
  await store.recordCardCopy(step.stepId, { kind: 'channel', channel: APPROVALS, ts: 'copy-1' });

  let copyFailures = 1;
  const drawn: string[] = [];
  const messenger = {
    async updateStepCard() {},
    async updateStepCopy({ step: shown }: { step: PendingStep; copy: CardCopy }) {
      if (copyFailures > 0) {
        copyFailures -= 1;
        throw new SlackCallError({ method: 'chat.update', cause: new Error('An HTTP protocol error occurred: statusCode = 503'), tryLater: true });
      }
      drawn.push(`copy at revision ${shown.revision}`);
    },
  } as unknown as ThreadMessenger;
  const refreshes = createCardRefreshes({ store, messenger, takeBacks: { takeBack: async () => {} }, logger, now, pause: async (ms) => void (clock += ms) });

  // As expiry-sweeper's expire (and escalate) do: showStep, and on a throw keepCardToRedraw.
  const stored = (await store.getStep(step.stepId))!;
  await showStep({ messenger, step: stored, logger }).catch(() => keepCardToRedraw({ store, stepId: step.stepId, logger, at: clock }));
  for (let i = 0; i < 3; i += 1) {
    await refreshes.retryDue();
    clock += 3_600_000;
  }
  expect(drawn).toEqual([`copy at revision ${stored.revision}`]);
});
