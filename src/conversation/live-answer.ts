import type { Logger } from 'pino';
import { faultPoint } from '../runtime/fault-points.js';
import { isFencedError } from '../store/fenced-error.js';
import type { ThreadState } from '../store/thread-state.js';
import { mentionable } from './participants.js';
import type { AnswerStream } from './thread-messenger.js';
import type { TurnScope } from './turn-scope.js';

/** The answer a turn is showing, and which of its messages the thread has on record. */
export interface ShownAnswer {
  stream?: AnswerStream;
  recorded: Set<string>;
  /** Messages whose save failed other than as fenced: it may have been written, so they may be on record. */
  maybeRecorded: Set<string>;
  /** Saves of the stream's messages still in flight (they settle, never reject). */
  recording: Set<Promise<void>>;
}

/** A turn's answer before it shows anything: `answerTs`, the messages the thread has on record. */
export function newShownAnswer(answerTs: readonly string[] = []): ShownAnswer {
  return { recorded: new Set(answerTs), maybeRecorded: new Set(), recording: new Set() };
}

export interface LiveAnswer {
  /** Streams a piece of the model's text; the stream opens once text has waited `openDelayMs`. */
  append(delta: string): void;
  /** The stream, once it opened. */
  readonly stream: AnswerStream | undefined;
  /** What the model wrote so far. */
  readonly streamed: string;
  /** The turn is over: a stream that has not opened yet never will (the answer is posted whole). */
  stopOpening(): void;
  /** Opens the stream now with the text so far, if it has not opened (a partial answer to show). */
  openNow(): AnswerStream | undefined;
}

/**
 * How long the first text waits before the stream opens. An answer that is complete by then (a
 * quick model, a short reply) is posted in one message: no edits, and no separate save of its
 * message timestamps. Too short to notice while reading a streamed answer.
 */
export const ANSWER_STREAM_OPEN_DELAY_MS = 250;

/** Streams the model's text as it comes; each message Slack creates is recorded in the thread so a successor can replace it. */
export function createLiveAnswer(options: { scope: TurnScope; thread: ThreadState; requesterId: string; shown: ShownAnswer; logger: Logger }): LiveAnswer {
  const { scope, thread, shown, logger } = options;
  let streamed = '';
  let stream: AnswerStream | undefined;
  let opening: NodeJS.Timeout | undefined;
  let stopped = false;

  const open = (): AnswerStream => {
    clearTimeout(opening);
    opening = undefined;
    stream ??= shown.stream = scope.messenger.startAnswer({
      channel: thread.channel,
      threadTs: thread.threadTs,
      recipientUserId: options.requesterId,
      recipientTeamId: thread.teamId,
      mentionableUserIds: mentionable(thread),
      ...(thread.answerTs ? { replacing: thread.answerTs } : {}),
      onMessages: (ts) => {
        thread.answerTs = [...ts];
        // Named: sent again by the client after its reply was lost, once another process took the
        // thread, it is answered as written rather than fenced, so the messages it recorded (which
        // that process rewrites with its answer) are not taken for unrecorded and removed.
        const recording = scope
          .save(thread, { named: true })
          .then(() => {
            for (const each of ts) shown.recorded.add(each);
            faultPoint('mid-answer');
          })
          .catch((error: unknown) => {
            if (!isFencedError(error)) for (const each of ts) shown.maybeRecorded.add(each);
            logger.warn({ event: 'answer-ts-save-failed', err: error }, 'could not record the answer messages');
          })
          .finally(() => shown.recording.delete(recording));
        shown.recording.add(recording);
      },
    });
    stream.append(streamed);
    return stream;
  };

  return {
    get stream() {
      return stream;
    },
    get streamed() {
      return streamed;
    },
    append(delta) {
      streamed += delta;
      if (stream) return stream.append(delta);
      if (!stopped) opening ??= setTimeout(open, ANSWER_STREAM_OPEN_DELAY_MS);
    },
    stopOpening() {
      stopped = true;
      clearTimeout(opening);
      opening = undefined;
    },
    openNow() {
      if (stream || !streamed.trim()) return stream;
      return open();
    },
  };
}
