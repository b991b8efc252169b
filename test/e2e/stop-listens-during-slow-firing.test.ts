import { describe, expect, it } from 'vitest';
import { createManualScheduleClock } from '../helpers/manual-schedule-clock.js';
import { CHANNEL, nextTs, startHarness, threadReplies } from './harness.js';

const START = Date.UTC(2026, 10, 25, 12, 7);
const FIRST_FIRING = Date.UTC(2026, 10, 25, 12, 15);
const SCHEDULE = `
schedules:
  - name: heartbeat
    cron: '*/15 * * * *'
    channel: ${CHANNEL}
    prompt: Check the pods.
`;

/**
 * Review (stop 4): README (8bdbec4) says SIGTERM "stops taking requests" and the stop "starts none
 * but those of the requests it acked" before it stopped listening. But `stop()` (create-bot.ts)
 * closes Slack's server only after `schedules.stop()` (a firing under way: its Slack post, which
 * waits out a 429's Retry-After) and `sweeper.stop()` (a whole sweep: reminders, escalations, card
 * redraws, take-backs, each a Slack call that may wait out a Retry-After) have returned. Meanwhile
 * it goes on acking new mentions, each its "own acked request" (`fromRequest`), so it starts brand
 * new turns after SIGTERM (an auto-approved command among them), which the orchestrator's SIGKILL
 * may then cut: what the stop's hand-back set out to prevent. Here the firing's post is held (Slack
 * slow) while a mention arrives just after SIGTERM.
 */
describe('SIGTERM while a scheduled firing is slow', () => {
  it('takes no new request, and starts no new turn, after the stop began', async () => {
    const clock = createManualScheduleClock(START);
    const h = await startHarness({ extraYaml: SCHEDULE, scheduleClock: clock });
    const held = h.slack.holdNext('chat.postMessage');
    let stopping: Promise<void> | undefined;
    try {
      h.openai.enqueue({ text: 'Answer to a mention sent after SIGTERM.' }, { text: 'Pods fine.' });
      const firing = clock.advanceTo(FIRST_FIRING);
      await held.received;
      stopping = h.bot.stop();
      const threadTs = nextTs();
      const response = await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs }).catch(() => undefined);
      held.release();
      await firing;
      await stopping;
      const answered = threadReplies(h, threadTs).some((message) => message.text.includes('after SIGTERM'));
      expect({ status: response?.status, answered }, 'a request acked after SIGTERM started a new turn on the stopping process').not.toEqual({ status: 200, answered: true });
    } finally {
      held.release();
      await stopping?.catch(() => undefined);
      await h.slack.close();
      await h.openai.close();
    }
  }, 60_000);
});
