import type { Logger } from 'pino';

/**
 * Answers a form submit whose decision is already recorded (recorded first, so a refusal can be
 * shown in the form). Past Slack's 3 s Bolt's HTTP receiver has answered the request itself, and
 * the late `ack` throws (ERR_HTTP_HEADERS_SENT): the decision stands all the same, so the failure
 * is logged and the caller goes on to publish it. Thrown, it would leave the cards undrawn and the
 * resume this process claimed unrun (and a stop waiting for it) until the thread's lock lapsed.
 */
export async function ackRecorded(ack: () => Promise<void>, options: { logger: Logger; callbackId: string }): Promise<void> {
  try {
    await ack();
  } catch (error) {
    options.logger.warn({ event: 'form-ack-failed', callbackId: options.callbackId, err: error }, 'could not answer a form submit whose decision was recorded; publishing it anyway');
  }
}
