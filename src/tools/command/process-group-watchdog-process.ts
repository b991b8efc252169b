/**
 * The entry of the process-group watchdog: a small child of a bot process that spawns commands
 * itself (`COUNTERSIGN_COMMAND_SPAWNER=off`). The bot tells it over the IPC channel which process
 * groups are running commands; when the channel closes, whether the bot stopped or was killed
 * (SIGKILL, the OOM killer), it stops those groups and exits. No imports: it must start fast and
 * stay tiny, and it runs from the TypeScript sources in tests with no import hook.
 */

/** After the bot process is gone, how long its commands get between SIGTERM and SIGKILL (as the spawner's). */
const ORPHAN_KILL_GRACE_MS = 1_000;

const watched = new Set<number>();

// Never 0 or 1: kill(-0) is our own group and kill(-1) every process we may signal.
const isProcessGroup = (pid: unknown): pid is number => typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 1;

function signalGroups(signal: NodeJS.Signals): void {
  for (const pid of watched) {
    try {
      process.kill(process.platform === 'win32' ? pid : -pid, signal);
    } catch {
      // Already gone.
    }
  }
}

process.on('message', (message: unknown) => {
  const { type, pid } = (typeof message === 'object' && message !== null ? message : {}) as { type?: unknown; pid?: unknown };
  if (!isProcessGroup(pid)) return;
  if (type === 'watch') watched.add(pid);
  else if (type === 'unwatch') watched.delete(pid);
});

process.on('disconnect', () => {
  if (watched.size === 0) process.exit(0);
  signalGroups('SIGTERM');
  setTimeout(() => {
    signalGroups('SIGKILL');
    process.exit(0);
  }, ORPHAN_KILL_GRACE_MS);
});

// Ctrl-C in a terminal signals the whole foreground group, the watchdog too; the bot decides when its
// commands stop, and its IPC channel closing is what stops the watchdog.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
