// Preloaded (`node --import`) into a bot child process by the crash and stall tests: installs the
// fault hook of the bot build being run, driven by COUNTERSIGN_CRASH_AT / COUNTERSIGN_STALL_AT.
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const main = process.argv[1];
const { installFaultHook } = await import(pathToFileURL(join(dirname(main), 'runtime/fault-points.js')).href);
let stalled = false;
installFaultHook((name) => {
  if (process.env.COUNTERSIGN_CRASH_AT === name) process.kill(process.pid, 'SIGKILL');
  if (process.env.COUNTERSIGN_STALL_AT === name && !stalled) {
    stalled = true;
    process.kill(process.pid, 'SIGSTOP');
  }
});
