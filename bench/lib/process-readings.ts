import { cpuMs, settledRss, waitForCpuIdle } from './processes.js';

/**
 * What a phase reads from /proc about the processes it measures. Phases take it as an option so a
 * test can hand in fakes and see which process was read and when; vi.mock cannot stand in for
 * processes.js there, because the suite shares one module graph between files (isolate: false) and a
 * module another file loaded first stays real.
 */
export interface ProcessReadings {
  cpuMs(pid: number): number;
  waitForCpuIdle(pid: number, options?: { windowMs?: number }): Promise<void>;
  settledRss(pid: number, options: { idleMs: number }): Promise<number>;
}

export const PROC_READINGS: ProcessReadings = {
  cpuMs: (pid) => cpuMs(pid),
  waitForCpuIdle: (pid, options) => waitForCpuIdle(pid, options),
  settledRss: (pid, options) => settledRss(pid, options),
};
