import type { WebClient } from '@slack/web-api';
import { afterEach, expect, it } from 'vitest';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import { commitTransition } from '../../src/approvals/transitions/commit-transition.js';
import { supersedeTransition } from '../../src/approvals/transitions/close-step.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';
import { CARD_REPOST_CHANNEL, clientLosingNoticeReply, recordedTakeBacks, startCardRepostScene } from '../helpers/card-repost-scene.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// 1b81776: the owed notice looks for its own text (`unlessPostedAfter`), but it is built from the step as it
// stands when the sweep tells it, while the notice Slack posted (reply lost) was built from the step then.
// A step that changed between the two (a click, a newer message, an expiry) makes the texts differ, so the
// earlier notice is not found and the thread is told "posted again just above" twice.
it('a notice of a card posted again whose reply was lost is told once even if the step changed before the sweep', async () => {
  const scene = await startCardRepostScene({ cleanups });
  const messenger = createWebApiMessenger({ client: clientLosingNoticeReply(scene.client as WebClient), logger: scene.logger });
  const { takeBacks } = recordedTakeBacks();
  let clock = Date.now();
  const refreshes = createCardRefreshes({ store: scene.store, messenger, takeBacks, logger: scene.logger, now: () => clock, pause: async (ms) => void (clock += ms) });

  await refreshes.redraw({ stepId: scene.step.stepId, error: new Error('cant_update_message') });
  // A newer message in the thread closes the request before the sweep tells the owed notice.
  await commitTransition(scene.store, scene.step.stepId, (step) => supersedeTransition(step, { userId: 'U0ALICE', now: clock }));
  for (let i = 0; i < 3; i += 1) {
    clock += 3_600_000;
    await refreshes.retryDue();
  }
  const notices = scene.slack
    .messages(CARD_REPOST_CHANNEL, scene.threadTs)
    .filter((message) => message.text.startsWith(':warning:'))
    .map((message) => message.text);
  expect(notices).toEqual([expect.stringContaining('so it is posted again just above')]);
});
