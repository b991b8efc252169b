import { Gauge, type Registry } from 'prom-client';

/** Work of this process now: running, and taken but waiting for room. */
export interface Load {
  running: number;
  waiting: number;
}

/**
 * `countersign_turns_running` and `countersign_turns_waiting`, read from the process's load gates at
 * scrape time (see `conversation/load-gate.ts`). What bounds the turns is the CPU (the event loop's
 * delay), not a constant, so these and the admission wait are how an operator sees a process that is
 * full: turns waiting, and waiting long, mean it needs more CPU (or workers).
 */
export function registerTurnLoadGauges({ registry, read }: { registry: Registry; read: () => Load }): void {
  registerLoadGauges({
    registry,
    read,
    running: { name: 'countersign_turns_running', help: 'Turns (work items) this process is running now.' },
    waiting: { name: 'countersign_turns_waiting', help: 'Turns this process has taken and holds until it has room for them (its event loop lags, or the cap is reached).' },
  });
}

/**
 * `countersign_commands_running` and `countersign_commands_waiting` (see `tools/command/command-slots.ts`):
 * approved commands waiting mean a burst met the process's limit or its memory ran short.
 */
export function registerCommandLoadGauges({ registry, read }: { registry: Registry; read: () => Load }): void {
  registerLoadGauges({
    registry,
    read,
    running: { name: 'countersign_commands_running', help: 'Command tools this process is running now.' },
    waiting: { name: 'countersign_commands_waiting', help: 'Command tool calls waiting to start (the running limit is reached, or memory is short).' },
  });
}

type GaugeName = { name: string; help: string };

function registerLoadGauges(options: { registry: Registry; read: () => Load; running: GaugeName; waiting: GaugeName }): void {
  const { registry, read } = options;
  for (const [gauge, field] of [
    [options.running, 'running'],
    [options.waiting, 'waiting'],
  ] as const) {
    new Gauge({
      ...gauge,
      registers: [registry],
      collect() {
        this.set(read()[field]);
      },
    });
  }
}
