import { Gauge, type Registry } from 'prom-client';

/** The turns of this process now: running, and taken but waiting for room (see `conversation/load-gate.ts`). */
export interface TurnLoad {
  running: number;
  waiting: number;
}

/**
 * `countersign_turns_running` and `countersign_turns_waiting`, read from the process's load gates at
 * scrape time. What bounds the turns is the CPU (the event loop's delay), not a constant, so these
 * and the admission wait are how an operator sees a process that is full: turns waiting, and waiting
 * long, mean it needs more CPU (or workers).
 */
export function registerTurnLoadGauges({ registry, read }: { registry: Registry; read: () => TurnLoad }): void {
  new Gauge({
    name: 'countersign_turns_running',
    help: 'Turns (work items) this process is running now.',
    registers: [registry],
    collect() {
      this.set(read().running);
    },
  });
  new Gauge({
    name: 'countersign_turns_waiting',
    help: 'Turns this process has taken and holds until it has room for them (its event loop lags, or the cap is reached).',
    registers: [registry],
    collect() {
      this.set(read().waiting);
    },
  });
}
