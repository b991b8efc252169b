/**
 * What the benchmark started (servers, child processes, connections) and must stop however the run
 * ends. Steps are pushed as each thing starts, so a run that fails half-way still stops exactly what
 * it had started.
 */
export interface CleanupStack {
  push(step: () => Promise<unknown>): void;
  /**
   * Runs every step, newest first, so that nothing is stopped while something started after it may
   * still use it. A failing step is ignored: the rest must still run, and the run's own error (if
   * any) is the one worth reporting.
   */
  runAll(): Promise<void>;
}

export function createCleanupStack(): CleanupStack {
  const steps: Array<() => Promise<unknown>> = [];
  return {
    push: (step) => {
      steps.push(step);
    },
    runAll: async () => {
      for (const step of steps.reverse()) await step().catch(() => undefined);
    },
  };
}

/**
 * Waits for starts run side by side, all of them even once one has failed, then gives their results
 * or throws the first failure: each start pushes its own stop once its thing runs, and one still
 * under way when the stack is run would leave its process behind.
 */
export async function allStarted<T extends readonly unknown[] | []>(starts: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const outcomes = await Promise.allSettled(starts);
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}
