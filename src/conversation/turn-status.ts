import type { ThreadMessenger } from './thread-messenger.js';

/**
 * How long a turn runs before its thread shows a status line ("is thinking…"). A turn done by then
 * (a quick model, a resumed call that runs at once) needs none, and nothing waits on Slack before
 * the model or a tool starts: against the real Slack each status call takes about as long as a
 * quick model call.
 */
export const TURN_STATUS_DELAY_MS = 250;
/**
 * How long the end waits for the status call on its way. The status is cosmetic, and the answer is
 * not: a slow or failing Slack must not hold it back (a status that lands after the answer is
 * removed by Slack two minutes later, as any status no message follows).
 */
const TURN_STATUS_END_WAIT_MS = 1_000;

export interface TurnStatus {
  /** What the turn is doing now; shown once the turn has run the delay, at once after that. */
  show(status: string): void;
  /**
   * The turn is about to post what came of it: no status goes out after this, and the one on its
   * way has landed when this resolves, or `endWaitMs` passed. Slack clears the status when the bot
   * posts in the thread; a status set after that would stay under the answer.
   */
  end(): Promise<void>;
}

/** The status line of one turn; failures to set it are ignored (a missing scope must not fail turns). */
export function createTurnStatus(options: {
  messenger: Pick<ThreadMessenger, 'setStatus'>;
  where: { channel: string; threadTs: string };
  delayMs?: number;
  /** `TURN_STATUS_END_WAIT_MS` unless given. */
  endWaitMs?: number;
}): TurnStatus {
  const { messenger, where } = options;
  let wanted: string | undefined;
  let sent: string | undefined;
  let due = false;
  let ended = false;
  // Each status goes out after the one before it, so the last one asked for is the one shown.
  let sending: Promise<void> = Promise.resolve();

  const flush = () => {
    if (ended || !due || wanted === undefined || wanted === sent) return;
    const status = wanted;
    sent = status;
    sending = sending.then(() => messenger.setStatus({ ...where, status })).catch(() => {});
  };
  const timer = setTimeout(() => {
    due = true;
    flush();
  }, options.delayMs ?? TURN_STATUS_DELAY_MS);

  return {
    show(status) {
      wanted = status;
      flush();
    },
    async end() {
      ended = true;
      clearTimeout(timer);
      let bound: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        bound = setTimeout(resolve, options.endWaitMs ?? TURN_STATUS_END_WAIT_MS);
      });
      await Promise.race([sending, waited]);
      clearTimeout(bound);
    },
  };
}
