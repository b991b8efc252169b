// Preloaded (`node --import`) into a bot child process by the crash and stall tests: installs the
// fault hook of the bot build being run, driven by COUNTERSIGN_CRASH_AT / COUNTERSIGN_STALL_AT, and
// by COUNTERSIGN_THROW_AT (a stray exception and an unhandled rejection, once, as a library's event
// callback could leave) / COUNTERSIGN_END_THREAD_AT (the thread the point is reached on ends). It
// runs in every thread: in the bot's thread (`bot-thread.js`, beside `main.js`) the fault points fire.
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const main = process.argv[1];
const { installFaultHook } = await import(pathToFileURL(join(dirname(main), 'runtime/fault-points.js')).href);
let stalled = false;
let thrown = false;

/**
 * A signal sent from a thread other than the main one reaches the process through the main
 * thread, which a loaded machine may not run for a while; meanwhile the sending thread would go
 * on past its fault point. So it waits here (wall-clock time, which has passed when the process
 * is continued) until the signal has taken effect.
 */
function signalAndWait(signal) {
  process.kill(process.pid, signal);
  if (!isMainThread) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2_000);
}

installFaultHook((name) => {
  if (process.env.COUNTERSIGN_CRASH_AT === name) signalAndWait('SIGKILL');
  if (process.env.COUNTERSIGN_STALL_AT === name && !stalled) {
    stalled = true;
    signalAndWait('SIGSTOP');
  }
  if (process.env.COUNTERSIGN_THROW_AT === name && !thrown) {
    thrown = true;
    // Outside the bot's own code path: nothing of it can catch them.
    setImmediate(() => {
      throw new Error(`stray exception at ${name}`);
    });
    void Promise.reject(new Error(`stray rejection at ${name}`));
  }
  // In a worker thread `process.exit` ends that thread only.
  if (process.env.COUNTERSIGN_END_THREAD_AT === name) process.exit(3);
});
