import { describe, expect, it } from 'vitest';
import type { StateStore } from '../store/state-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { postOutbox } from './answer-outbox.js';
import { createLease } from './lease.js';
import type { ThreadMessenger } from './thread-messenger.js';
import { createTurnScope } from './turn-scope.js';

const fence = { threadKey: 'T1:C1:1.1', token: 't1' };
const limits = { historyTtlMs: 60_000, maxMessages: 100, maxBytes: 1_000_000 };

function scopeWhoseAnswerPostFails() {
  const store = { fenceState: async () => 'current' } as unknown as StateStore;
  const messenger = {
    postAnswer: async () => {
      throw new Error('Slack chat.postMessage failed: HTTP 500');
    },
  } as unknown as ThreadMessenger;
  const lease = createLease({ store, fence, heldUntil: () => Date.now() + 60_000 });
  return createTurnScope({ store, messenger, lease, limits, now: Date.now, takeBacks: { takeBack: async () => {} } });
}

describe('an answer Slack refuses', () => {
  it('fails the item and goes with it: the finish saves the thread without it, so no later recovery posts it', async () => {
    const scope = scopeWhoseAnswerPostFails();
    const thread: ThreadState = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 0), outbox: 'Three pods run.', answerTs: ['1.2'] };
    await expect(postOutbox(scope, thread)).rejects.toThrow(/HTTP 500/);
    const closing = scope.takeItemEnd()?.closing?.thread;
    expect(closing?.threadKey).toBe(fence.threadKey);
    expect(closing?.outbox).toBeUndefined();
    expect(closing?.answerTs).toBeUndefined();
  });
});
