import { describe, expect, it } from 'vitest';
import { FencedError } from '../store/fenced-error.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { createLease } from './lease.js';
import type { ThreadMessenger } from './thread-messenger.js';
import { createTurnScope } from './turn-scope.js';

const fence = { threadKey: 'T1:C1:1.1', token: 't1' };
const limits = { historyTtlMs: 60_000, maxMessages: 100, maxBytes: 1_000_000 };

/** A scope whose saves are refused as fenced once `state.fenced` (another process took the thread), or fail while `state.unreachable`. */
function scopeWith(state: { fenced: boolean; unreachable?: boolean }) {
  const saves: unknown[] = [];
  const store = {
    fenceState: async () => (state.fenced ? 'taken' : 'current'),
    saveThread: async (thread: ThreadState) => {
      if (state.fenced) throw new FencedError(fence.threadKey);
      if (state.unreachable) throw new Error('Connection is closed.');
      saves.push(thread.outbox ?? 'cleared');
    },
  } as unknown as StateStore;
  const lease = createLease({ store, fence, heldUntil: () => Date.now() + 60_000 });
  const scope = createTurnScope({ store, messenger: {} as ThreadMessenger, lease, limits, now: Date.now, takeBacks: { takeBack: async () => {} } });
  return { scope, saves };
}

const thread = (): ThreadState => newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 0);

describe('the take-back of a save kept for the end of the item', () => {
  it('goes to the worker with the kept save', async () => {
    const { scope } = scopeWith({ fenced: false });
    const takenBack: string[] = [];
    scope.saveAtEnd(thread(), { takeBack: async () => void takenBack.push('answer') });
    const end = scope.takeItemEnd();
    expect(end?.closing?.thread.threadKey).toBe(fence.threadKey);
    await end?.takeBack?.();
    expect(takenBack).toEqual(['answer']);
    expect(scope.takeItemEnd()).toBeUndefined();
  });

  it('runs when a later save of the same thread, which carries the kept one, is refused as fenced', async () => {
    const state = { fenced: false };
    const { scope } = scopeWith(state);
    const takenBack: string[] = [];
    const shown = thread();
    scope.saveAtEnd(shown, { takeBack: async () => void takenBack.push('answer') });
    state.fenced = true;
    await expect(scope.save(shown)).rejects.toBeInstanceOf(FencedError);
    expect(takenBack).toEqual(['answer']);
    expect(scope.takeItemEnd()).toBeUndefined();
  });

  it('runs when the kept save is flushed and refused; is dropped once it is written', async () => {
    const state = { fenced: false };
    const { scope, saves } = scopeWith(state);
    const takenBack: string[] = [];
    scope.saveAtEnd(thread(), { takeBack: async () => void takenBack.push('first') });
    await scope.flush();
    expect(saves).toEqual(['cleared']);
    expect(scope.takeItemEnd()).toBeUndefined();
    scope.saveAtEnd(thread(), { takeBack: async () => void takenBack.push('second') });
    state.fenced = true;
    await expect(scope.flush()).rejects.toBeInstanceOf(FencedError);
    expect(takenBack).toEqual(['second']);
  });

  it('keeps what a carrying save records when the save ran, its reply lost, and the resend is refused after another process took the thread', async () => {
    const inner = createMemoryStore();
    const held = { threadKey: fence.threadKey, token: (await inner.tryLock(fence.threadKey, 60_000))! };
    // The save runs; its reply is lost; the thread's lock goes to another process; the client sends the save again.
    const store: StateStore = {
      ...inner,
      async saveThread(saved, ttlMs, saveFence, options) {
        await inner.saveThread(saved, ttlMs, saveFence, options);
        await inner.extendLock(held, 1);
        await new Promise((resolve) => setTimeout(resolve, 5));
        await inner.tryLock(fence.threadKey, 60_000);
        return inner.saveThread(saved, ttlMs, saveFence, options);
      },
    };
    const lease = createLease({ store, fence: held, heldUntil: () => Date.now() + 60_000 });
    const scope = createTurnScope({ store, messenger: {} as ThreadMessenger, lease, limits, now: Date.now, takeBacks: { takeBack: async () => {} } });
    const takenBack: string[] = [];
    const shown = thread();
    scope.saveAtEnd(shown, { takeBack: async () => void takenBack.push('answer') });
    await scope.save(shown);
    expect(takenBack).toEqual([]);
  });
});

describe('the take-back of a save', () => {
  it('runs when the save is refused as fenced, with a kept save it supersedes', async () => {
    const state = { fenced: false };
    const { scope } = scopeWith(state);
    const takenBack: string[] = [];
    const shown = thread();
    scope.saveAtEnd(shown, { takeBack: async () => void takenBack.push('kept') });
    state.fenced = true;
    await expect(scope.save(shown, { takeBack: async () => void takenBack.push('own') })).rejects.toBeInstanceOf(FencedError);
    expect(takenBack).toEqual(['kept', 'own']);
  });

  it('does not run once the save is written, nor when it failed otherwise (it may have landed)', async () => {
    const state = { fenced: false, unreachable: false };
    const { scope, saves } = scopeWith(state);
    const takenBack: string[] = [];
    await scope.save(thread(), { takeBack: async () => void takenBack.push('written') });
    expect(saves).toEqual(['cleared']);
    state.unreachable = true;
    await expect(scope.save(thread(), { takeBack: async () => void takenBack.push('failed') })).rejects.toThrow('Connection is closed.');
    expect(takenBack).toEqual([]);
  });
});

describe('a save that trims the history', () => {
  it("marks the thread's call ids forgotten, so new calls get fresh ids; one that trims nothing does not", async () => {
    const store = { fenceState: async () => 'current', saveThread: async () => {} } as unknown as StateStore;
    const lease = createLease({ store, fence, heldUntil: () => Date.now() + 60_000 });
    const scope = createTurnScope({ store, messenger: {} as ThreadMessenger, lease, limits: { ...limits, maxMessages: 2 }, now: Date.now, takeBacks: { takeBack: async () => {} } });
    const exchange = (text: string) => [
      { role: 'user' as const, content: text },
      { role: 'assistant' as const, content: 'ok' },
    ];
    const short = { ...thread(), messages: exchange('first') };
    await scope.save(short);
    expect(short.callIdsForgotten).toBeUndefined();
    const long = { ...thread(), messages: [...exchange('first'), ...exchange('second')] };
    await scope.save(long);
    expect(long.messages).toEqual(exchange('second'));
    expect(long.callIdsForgotten).toBe(true);
  });
});
