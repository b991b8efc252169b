/**
 * Reads of `read(key)` that callers asking at once share, where each caller must have an answer to a
 * read begun after it asked (one begun before may describe the world before what the caller knows):
 * the first to ask begins one; those who ask while it is under way share the next, begun once it
 * ended. So a burst of callers makes two reads at most, not one each, and none is given the answer of a
 * read begun before it asked. Keyed (the connection read over): callers of another key never share a read.
 */
export function createFreshReads<KEY extends object, RESULT>(read: (key: KEY) => Promise<RESULT>) {
  const reads = new WeakMap<KEY, { running?: Promise<RESULT>; next?: Promise<RESULT> }>();

  return { ask };

  /**
   * The answer of a read begun after this call. `signal`: this caller stops waiting when it aborts (the
   * promise rejects with its reason); the read, which others may share, goes on for them.
   */
  function ask(key: KEY, signal?: AbortSignal): Promise<RESULT> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return signal ? waitUnlessAborted(shared(key), signal) : shared(key);
  }

  function shared(key: KEY): Promise<RESULT> {
    const state = reads.get(key) ?? {};
    reads.set(key, state);
    const { running } = state;
    if (!running) return begin(key, state);
    // Asked while one is under way (begun before this caller asked): the next one, shared by all who ask meanwhile.
    state.next ??= running.then(noop, noop).then(() => {
      state.next = undefined;
      return begin(key, state);
    });
    return state.next;
  }

  function begin(key: KEY, state: { running?: Promise<RESULT> }): Promise<RESULT> {
    const running = read(key).finally(() => {
      if (state.running === running) state.running = undefined;
    });
    state.running = running;
    return running;
  }
}

/** `promise`'s outcome, or `signal`'s reason once it aborts first; `promise` itself is left to settle. */
function waitUnlessAborted<RESULT>(promise: Promise<RESULT>, signal: AbortSignal): Promise<RESULT> {
  return new Promise<RESULT>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function noop(): void {}
