/**
 * The entry of the process-group watchdog: a small child of a bot process that spawns commands
 * itself (`COUNTERSIGN_COMMAND_SPAWNER=off`) or runs stdio MCP servers. It starts with the process
 * groups already running in its argv; the bot tells it the later ones over the IPC channel, and it
 * answers each (those of its argv too) with `{ type: 'watching', pid }`. When the channel closes,
 * whether the bot stopped or was killed (SIGKILL, the OOM killer), it stops those groups and exits.
 * No imports: it must start fast and stay tiny, and it runs from the TypeScript sources in tests
 * with no import hook.
 */

/** After the bot process is gone, how long its commands get between SIGTERM and SIGKILL (as the spawner's). */
const ORPHAN_KILL_GRACE_MS = 1_000;

// Never 0 or 1: kill(-0) is our own group and kill(-1) every process we may signal.
const isProcessGroup = (pid: unknown): pid is number => typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 1;

// From argv, not a first message: a bot killed right after the fork never sent one.
const watched = new Set<number>(process.argv.slice(2).map(Number).filter(isProcessGroup));
let stopping = false;

function signalGroups(signal: NodeJS.Signals): void {
  for (const pid of watched) {
    try {
      process.kill(process.platform === 'win32' ? pid : -pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** Tells the bot the group is held: it uses the server (or goes on) once it knows. */
function confirm(pid: number): void {
  if (process.connected) process.send?.({ type: 'watching', pid }, undefined, undefined, () => {});
}

function stopGroupsAndExit(): void {
  if (stopping) return;
  stopping = true;
  if (watched.size === 0) process.exit(0);
  signalGroups('SIGTERM');
  setTimeout(() => {
    signalGroups('SIGKILL');
    process.exit(0);
  }, ORPHAN_KILL_GRACE_MS);
}

process.on('message', (message: unknown) => {
  const { type, pid } = (typeof message === 'object' && message !== null ? message : {}) as { type?: unknown; pid?: unknown };
  if (!isProcessGroup(pid)) return;
  if (type === 'watch') {
    watched.add(pid);
    confirm(pid);
  } else if (type === 'unwatch') watched.delete(pid);
});

process.on('disconnect', stopGroupsAndExit);

// Ctrl-C in a terminal signals the whole foreground group, the watchdog too; the bot decides when its
// commands stop, and its IPC channel closing is what stops the watchdog.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});

// A bot killed while this process started closed the channel before the listeners above were there:
// its 'disconnect' (and any message) is lost, and only `connected` tells.
if (process.connected) for (const pid of watched) confirm(pid);
else stopGroupsAndExit();
