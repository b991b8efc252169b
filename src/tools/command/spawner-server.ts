import { signalProcessGroup, spawnCommand } from './run-command.js';
import { requestProblem, type SpawnerReply, type SpawnerRequest, type SpawnerRunRequest } from './spawner-protocol.js';

/**
 * After the bot process is gone, how long its commands get between SIGTERM and SIGKILL. Short:
 * nobody is left to read their output.
 */
const ORPHAN_KILL_GRACE_MS = 1_000;

interface RunningCommand {
  controller: AbortController;
  pid?: number;
}

/**
 * The spawner's side of the IPC channel: runs each request with `spawnCommand` (the very code the
 * direct runner uses) and replies with the result. When the channel closes (the bot stopped it, or
 * the bot died), it stops every command it started, process group and all, and exits.
 */
export function serveSpawnerRequests(channel: NodeJS.Process = process): void {
  const send = channel.send?.bind(channel);
  if (send === undefined) throw new Error('the command spawner must be started by the bot process (child_process.fork)');
  const running = new Map<number, RunningCommand>();
  let closing = false;

  const reply = (message: SpawnerReply) => {
    // The channel may already be closed; the command's result then has nobody to go to.
    if (channel.connected) send(message, undefined, undefined, () => {});
  };

  const run = (request: SpawnerRunRequest) => {
    if (running.has(request.id)) return reply({ type: 'rejected', id: request.id, error: `request ${request.id} is already running` });
    const command: RunningCommand = { controller: new AbortController() };
    running.set(request.id, command);
    const { type: _type, id, ...options } = request;
    let groupGone = () => {};
    const gone = new Promise<void>((resolve) => {
      groupGone = resolve;
    });
    spawnCommand({
      ...options,
      abortSignal: command.controller.signal,
      onSpawn: (pid) => {
        command.pid = pid;
        reply({ type: 'spawned', id, pid });
      },
      onGroupGone: () => groupGone(),
    })
      .then(
        (result) => reply({ type: 'result', id, result }),
        (error: unknown) => reply({ type: 'threw', id, error: describeError(error) }),
      )
      // Still running (and stopped when the bot goes) after its result, while its process group runs.
      .then(() => (command.pid === undefined ? undefined : gone))
      .finally(() => {
        running.delete(id);
        if (closing && running.size === 0) process.exit(0);
      });
  };

  channel.on('message', (message: unknown) => {
    const problem = requestProblem(message);
    if (problem !== undefined) {
      const id = (message as { id?: unknown } | null)?.id;
      return reply({ type: 'rejected', id: Number.isSafeInteger(id) ? (id as number) : -1, error: `invalid request: ${problem}` });
    }
    const request = message as SpawnerRequest;
    if (request.type === 'abort') running.get(request.id)?.controller.abort();
    else if (!closing) run(request);
  });

  channel.on('disconnect', () => {
    closing = true;
    if (running.size === 0) process.exit(0);
    for (const command of running.values()) command.controller.abort();
    setTimeout(() => {
      for (const { pid } of running.values()) if (pid !== undefined) signalProcessGroup(pid, 'SIGKILL');
      process.exit(0);
    }, ORPHAN_KILL_GRACE_MS);
  });

  // Ctrl-C in a terminal signals the whole foreground group, the spawner too; the bot decides when
  // it stops (it first lets running commands finish), and its IPC channel closing is what stops it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) channel.on(signal, () => {});
}

function describeError(error: unknown): { name: string; message: string; code?: string } {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const { code } = error as NodeJS.ErrnoException;
  return { name: error.name, message: error.message, ...(typeof code === 'string' && { code }) };
}
