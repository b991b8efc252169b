import { performance } from 'node:perf_hooks';

/** Runs one named phase of the benchmark, logging its start and how long it took. */
export type RunPhase = <T>(name: string, work: () => Promise<T>) => Promise<T>;

export interface PhaseTimer {
  phase: RunPhase;
  /** Wall time of every phase run so far, by name (reported as `phasesMs`). */
  phaseMs: Record<string, number>;
}

/**
 * Times the phases of one run. The duration is recorded and logged even when the phase throws, so a
 * run that breaks still says how far it got and how long that took.
 */
export function createPhaseTimer(log: (line: string) => void): PhaseTimer {
  const phaseMs: Record<string, number> = {};
  const phase: RunPhase = async (name, work) => {
    const startedAt = performance.now();
    log(`[bench] ${name}…`);
    try {
      return await work();
    } finally {
      phaseMs[name] = Math.round(performance.now() - startedAt);
      log(`[bench] ${name}: ${(phaseMs[name] / 1000).toFixed(1)} s`);
    }
  };
  return { phase, phaseMs };
}
