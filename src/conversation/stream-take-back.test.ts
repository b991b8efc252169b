import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { newShownAnswer } from './live-answer.js';
import { takeBackStream } from './stream-take-back.js';
import type { AnswerStream } from './thread-messenger.js';
import type { TurnScope } from './turn-scope.js';

const logger = pino({ level: 'silent' });
const thread = (): ThreadState => newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 0);

/** A fenced turn's stream that showed `ts`, and what its take-back removes. */
function fencedTurn(ts: string[], stored: { answerTs?: string[] } | 'unreadable' | undefined) {
  const removed: string[] = [];
  const scope = { takeBack: async ({ ts: each }: { ts: readonly string[] }) => void removed.push(...each) } as unknown as TurnScope;
  const store = {
    getThread: async () => {
      if (stored === 'unreadable') throw new Error('Connection is closed.');
      return stored === undefined ? undefined : { ...thread(), ...stored };
    },
  };
  const shown = newShownAnswer();
  shown.stream = { append: () => {}, finish: async () => {}, messageTs: () => ts } satisfies AnswerStream;
  return { removed, shown, takeBack: () => takeBackStream({ scope, store, thread: thread(), shown, logger }) };
}

describe("a fenced turn's take-back of its stream", () => {
  it('removes a message no save recorded and the stored thread does not record', async () => {
    const turn = fencedTurn(['m1', 'm2'], { answerTs: [] });
    turn.shown.recorded.add('m1');
    await turn.takeBack();
    expect(turn.removed).toEqual(['m2']);
  });

  it("waits for a save of the stream's messages still in flight: answered as written, its messages stay", async () => {
    const turn = fencedTurn(['m1'], undefined);
    let answer!: () => void;
    const recording = new Promise<void>((resolve) => (answer = resolve)).then(() => void turn.shown.recorded.add('m1'));
    turn.shown.recording.add(recording);
    const takingBack = turn.takeBack();
    await new Promise((resolve) => setTimeout(resolve, 10));
    answer();
    await takingBack;
    expect(turn.removed).toEqual([]);
  });

  it('keeps a message the stored thread records, though its own save was refused', async () => {
    const turn = fencedTurn(['m1'], { answerTs: ['m1'] });
    await turn.takeBack();
    expect(turn.removed).toEqual([]);
  });

  it('keeps a message whose save failed other than as fenced (it may have been written)', async () => {
    const turn = fencedTurn(['m1'], { answerTs: [] });
    turn.shown.maybeRecorded.add('m1');
    await turn.takeBack();
    expect(turn.removed).toEqual([]);
  });

  it('removes nothing when the stored thread cannot be read', async () => {
    const turn = fencedTurn(['m1'], 'unreadable');
    await turn.takeBack();
    expect(turn.removed).toEqual([]);
  });
});
