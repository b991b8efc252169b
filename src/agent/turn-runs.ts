/**
 * The tool runs of one turn, so that a turn that fails takes its calls down with it. The AI SDK runs
 * a step's calls inside its own stream, which goes on after runTurn stopped reading it: a provider
 * `error` part followed by the step's finish still runs the step's calls. Once the turn is closed no
 * call starts, and closing waits for the calls already under way (their abort signal fired), so the
 * executions the failure records are every call that ran.
 */
export interface TurnRuns {
  /** Runs one call's execute; refused at once when the turn is closed, else awaited by `close`. */
  track<RESULT>(run: () => Promise<RESULT>): Promise<RESULT>;
  /** Whether the turn is over: a call checks it last before it starts, and after its marker. */
  closed(): boolean;
  /** Closes the turn (no call starts from here) and waits for the calls under way to settle. */
  close(): Promise<void>;
}

/** What a call the closed turn refused tells the SDK; it never reaches the history (the turn failed). */
export class TurnClosedError extends Error {
  constructor() {
    super(TURN_CLOSED_TEXT);
    this.name = 'TurnClosedError';
  }
}

/** What the model (and the audit trail) hear of a call whose marker was written as the turn failed. */
export const TURN_CLOSED_TEXT = 'Not run: the turn had already failed.';

export function createTurnRuns(): TurnRuns {
  let isClosed = false;
  const running = new Set<Promise<unknown>>();
  return {
    track(run) {
      if (isClosed) return Promise.reject(new TurnClosedError());
      const promise = run();
      const settled = promise.then(
        () => {},
        () => {},
      );
      running.add(settled);
      void settled.then(() => running.delete(settled));
      return promise;
    },
    closed: () => isClosed,
    async close() {
      isClosed = true;
      await Promise.all(running);
    },
  };
}
