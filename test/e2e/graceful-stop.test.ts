import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { nextTs, startHarness, threadReplies, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * SIGTERM (bot.stop()) while a follow-up message Slack already has its 200 for is still in its
 * listener's store round trips, its work not yet queued: nothing is running, so a stop that went
 * straight to worker.idle() closed the store under the listener and the message was lost.
 */
describe('stopping while an acked message is still being taken in', () => {
  it('waits for it: the message is queued and answered before the store closes', async () => {
    let holdThreadRead = false;
    const arrived = deferred();
    const appStopped = deferred();
    const h = await startHarness({
      wrapStore: (store: StateStore): StateStore => ({
        ...store,
        async getThread(threadKey) {
          if (holdThreadRead) {
            holdThreadRead = false;
            arrived.resolve();
            // Its round trip is still on its way when the stop has stopped taking requests.
            await appStopped.promise;
          }
          return store.getThread(threadKey);
        },
      }),
    });
    const stopApp = h.bot.app.stop.bind(h.bot.app);
    h.bot.app.stop = async (...args) => {
      const stopped = await stopApp(...args);
      appStopped.resolve();
      return stopped;
    };
    try {
      h.openai.enqueue({ text: 'Hello Alice.' }, { text: 'Second answer.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Hello Alice.'), { message: 'the first answer' });
      await h.settled();

      holdThreadRead = true;
      const response = await h.threadMessage({ user: 'UALICE', text: 'and another thing', threadTs });
      expect(response.status).toBe(200);
      await arrived.promise;
      await h.bot.stop();

      expect(threadReplies(h, threadTs).map((message) => message.text)).toEqual(['Hello Alice.', 'Second answer.']);
    } finally {
      appStopped.resolve();
      await h.slack.close();
      await h.openai.close();
    }
  });
});
