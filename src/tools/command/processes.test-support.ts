import { existsSync, readdirSync, readFileSync } from 'node:fs';

// A killed orphan stays a zombie until PID 1 reaps it, and some container PID 1s never do.
export function isAlive(pid: number): boolean {
  if (process.platform === 'linux') {
    return existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A command that starts a grandchild (in its process group), writes both process ids to `pidFile`
 * as JSON, and waits a minute: what a stuck tool looks like.
 */
export function hangingCommand(pidFile: string): string[] {
  const script = `const child = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, JSON.stringify([process.pid, child.pid]));
setTimeout(() => {}, 60000);`;
  return [process.execPath, '-e', script];
}

/** The process ids `hangingCommand` wrote, once it has. */
export function readPids(pidFile: string): number[] | undefined {
  try {
    const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as number[];
    return pids.length === 2 ? pids : undefined;
  } catch {
    return undefined;
  }
}

/** The process that started `pid`, from /proc (Linux only). */
export function parentOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
}

/** The live processes `pid` started (Linux only). */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => {
      try {
        return parentOf(candidate) === pid && isAlive(candidate);
      } catch {
        return false; // Gone while we looked.
      }
    });
}

/** `argv` as an argv template that runs it as is: templates read `{name}` as a placeholder, so braces are doubled. */
export function literalArgvTemplate(argv: string[]): string[] {
  return argv.map((element) => element.replaceAll('{', '{{').replaceAll('}', '}}'));
}
