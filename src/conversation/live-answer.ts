import type { Logger } from 'pino';
import { faultPoint } from '../runtime/fault-points.js';
import type { ThreadState } from '../store/thread-state.js';
import { mentionable } from './participants.js';
import type { AnswerStream } from './thread-messenger.js';
import type { TurnScope } from './turn-scope.js';

/** The answer a turn is showing, and which of its messages the thread has on record. */
export interface ShownAnswer {
  stream?: AnswerStream;
  recorded: Set<string>;
}

export interface LiveAnswer {
  /** Streams a piece of the model's text, opening the stream on the first one. */
  append(delta: string): void;
  /** The stream, once text arrived. */
  readonly stream: AnswerStream | undefined;
  /** What the model wrote so far. */
  readonly streamed: string;
}

/** Streams the model's text as it comes; each message Slack creates is recorded in the thread so a successor can replace it. */
export function createLiveAnswer(options: { scope: TurnScope; thread: ThreadState; requesterId: string; shown: ShownAnswer; logger: Logger }): LiveAnswer {
  const { scope, thread, shown, logger } = options;
  let streamed = '';
  let stream: AnswerStream | undefined;
  return {
    get stream() {
      return stream;
    },
    get streamed() {
      return streamed;
    },
    append(delta) {
      streamed += delta;
      stream ??= shown.stream = scope.messenger.startAnswer({
        channel: thread.channel,
        threadTs: thread.threadTs,
        recipientUserId: options.requesterId,
        recipientTeamId: thread.teamId,
        mentionableUserIds: mentionable(thread),
        ...(thread.answerTs ? { replacing: thread.answerTs } : {}),
        onMessages: (ts) => {
          thread.answerTs = [...ts];
          scope
            .save(thread)
            .then(() => {
              for (const each of ts) shown.recorded.add(each);
              faultPoint('mid-answer');
            })
            .catch((error: unknown) => logger.warn({ event: 'answer-ts-save-failed', err: error }, 'could not record the answer messages'));
        },
      });
      stream.append(delta);
    },
  };
}
