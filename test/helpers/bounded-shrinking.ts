import fc from 'fast-check';

/**
 * Seconds a failed property may spend shrinking. A synchronous predicate holds the worker, and
 * vitest's timeout cannot fire until fast-check returns: shrinking a huge generated form took
 * 205 s (1,198 shrinks). Set `PROPERTY_SHRINK_SECONDS` higher for a smaller counterexample.
 */
export const SHRINK_SECONDS = Number(process.env.PROPERTY_SHRINK_SECONDS ?? 20);

/**
 * A fast-check plugin that stops shrinking `seconds` after the first failure and reports the
 * smallest failure found so far, as a failure (an interrupted run with no failure is not touched).
 * The report keeps fast-check's seed and path, so the shrink can be resumed from there.
 * `now` (milliseconds) is for tests.
 */
export function boundedShrinking<Ts>({ seconds = SHRINK_SECONDS, now = () => performance.now() }: { seconds?: number; now?: () => number } = {}): fc.Plugin<Ts> {
  return () => {
    let failedAt: number | undefined;
    let stopped = false;
    const note = <Out>(out: Out): Out => {
      if (out !== null && !fc.PreconditionFailure.isFailure(out)) failedAt ??= now();
      return out;
    };
    return {
      decorateRun: (nestedRun) => (value) => {
        if (failedAt !== undefined && now() - failedAt >= seconds * 1000) {
          // Interrupts the run: fast-check reports the failure it holds.
          stopped = true;
          return new fc.PreconditionFailure(true);
        }
        const out = nestedRun(value);
        return out !== null && typeof out === 'object' && 'then' in out ? out.then(note) : note(out);
      },
      onAllRunsComplete: (details) => {
        if (!stopped || !details.failed) return;
        // Throwing replaces fast-check's report: the same report, saying the counterexample may not be the smallest.
        const report = fc.defaultReportMessage(details) ?? 'Property failed';
        throw new Error(`${report}\n\nShrinking stopped after ${seconds} s (PROPERTY_SHRINK_SECONDS): a smaller counterexample may exist.`, { cause: details.errorInstance });
      },
    };
  };
}
