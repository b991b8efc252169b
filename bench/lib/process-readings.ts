import { heapAfterGc, type HeapAfterGc } from './inspector.js';
import { cpuMs, settledRss, waitForCpuIdle } from './processes.js';

/**
 * What a phase reads about the processes it measures: from /proc, and over a process's inspector its
 * heap after a forced full GC. Phases take it as an option so a test can hand in fakes and see which
 * process was read and when; vi.mock cannot stand in for these modules there, because the suite
 * shares one module graph between files (isolate: false) and a module another file loaded first
 * stays real.
 */
export interface ProcessReadings {
  cpuMs(pid: number): number;
  /** Until every one of the processes was idle in the same window. */
  waitForCpuIdle(pids: number | readonly number[], options?: { windowMs?: number }): Promise<void>;
  settledRss(pid: number, options: { idleMs: number; idleWindowMs?: number }): Promise<number>;
  heapAfterGc(inspectorUrl: string): Promise<HeapAfterGc>;
}

export const PROC_READINGS: ProcessReadings = {
  cpuMs: (pid) => cpuMs(pid),
  waitForCpuIdle: (pids, options) => waitForCpuIdle(pids, options),
  settledRss: (pid, options) => settledRss(pid, options),
  heapAfterGc: (inspectorUrl) => heapAfterGc(inspectorUrl),
};
