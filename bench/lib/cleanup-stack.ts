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
