import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { defaultSearchPath } from './default-search-path.js';
import { elfInterpreter } from './elf-interpreter.js';
import { USE_PROCESS_GROUP } from './process-group.js';

/**
 * The stand-in a held child runs until it is let go: it waits for a line on fd 3, then becomes the
 * command (`exec`: the same process, so the same pid and process group), fd 3 closed. The command
 * and its arguments are positional parameters, never part of the script: nothing is interpolated.
 * If the line never comes (the bot was killed before it let the child go), `read` meets the end of
 * the pipe and the stand-in exits: the command never ran. `read` runs in a subshell, so the variable
 * it sets is not the command's (any name could be one it is given: `_` is in most environments).
 * The command gets its environment through the shell: names that are not shell identifiers are
 * dropped, IFS, OPTIND and PPID (if set) are the shell's, PWD is set (README, "Command tools and
 * `spawn`"). Not handed over otherwise: in argv, anyone could read it in /proc/<pid>/cmdline.
 */
export const HOLD_SCRIPT = '(read -r line <&3) || exit 125; exec "$@" 3<&-';
/**
 * `HOLD_SCRIPT` for a child given no `PATH`: the shell looks the command up along `$1`, the search
 * path `spawn` would have used (`defaultSearchPath`), not along its own default. A variable that was
 * not in the environment is not exported when it is set: the command still gets no `PATH`.
 */
export const HOLD_SCRIPT_SEARCHING = '(read -r line <&3) || exit 125; PATH=$1; shift; exec "$@" 3<&-';
export const HOLD_SHELL = '/bin/sh';

export interface HeldChild {
  child: ChildProcess;
  /**
   * Whether `child` is the stand-in, which runs none of the command until `release`; false when the
   * command was spawned outright (it runs already, and `release` does nothing).
   */
  held: boolean;
  /** Lets the command run. Quiet if the child is gone (stopped while held). */
  release(): void;
}

export interface SpawnHeldOptions extends Omit<SpawnOptions, 'stdio' | 'shell'> {
  stdio: [StdioChoice, StdioChoice, StdioChoice];
}
type StdioChoice = 'pipe' | 'ignore' | 'inherit';

/**
 * Spawns `command` held: its process exists (its pid, the group it leads, are known) but runs none
 * of the command's code until `release`. So whatever must watch the group (the process-group
 * watchdog) is told before the command can do anything that matters; spawned outright, the command
 * runs from the moment `spawn` returns, and a bot killed before it told the watchdog left it running
 * unwatched. When holding is not possible (Windows, no process groups; a child given no `PATH` where
 * `spawn`'s default search path is not known), or the command is certain not to run (not found, not
 * executable, its `#!` interpreter or ELF loader missing, `cwd` not a directory: let `spawn` report
 * it, as before), it is spawned outright. Whatever may run is held (`execOutcome`).
 */
export function spawnHeld(command: string, args: readonly string[], options: SpawnHeldOptions): HeldChild {
  const standIn = standInArguments(command, args, options);
  if (standIn === undefined) return { child: spawn(command, args, { ...options, shell: false }), held: false, release: () => {} };
  const child = spawn(HOLD_SHELL, standIn, { ...options, shell: false, stdio: [...options.stdio, 'pipe'] });
  // A socket both ways (Node's 'pipe'); only written to.
  const gate = child.stdio[3] as Writable | null | undefined;
  // A child stopped while held is gone: writing to it fails (EPIPE), which is no news.
  gate?.on('error', () => {});
  let released = false;
  return {
    child,
    held: true,
    release() {
      if (released || gate === null || gate === undefined) return;
      released = true;
      // Closed once written: an open pipe would keep the bot process alive.
      gate.end('\n', () => gate.destroy());
    },
  };
}

/** Why a held command or server was not let go: nothing would stop it if the bot were killed. */
export function notWatched(executable: string): string {
  return `could not start ${executable}: the process-group watchdog is not running, so it was not started`;
}

/**
 * The stand-in's arguments if `command` can be held: it is found as `spawn` would find it (the `PATH`
 * of the child's environment, or the C library's default without one; a path relative to its cwd),
 * and the shell's `exec` is handed what runs that same file with the same arguments.
 */
function standInArguments(command: string, args: readonly string[], { env, cwd }: SpawnHeldOptions): string[] | undefined {
  if (!USE_PROCESS_GROUP || command === '') return undefined;
  const directory = cwd === undefined ? process.cwd() : String(cwd);
  if (!isDirectory(directory)) return undefined;
  const found = whatSpawnRuns(command, directory, (env ?? process.env).PATH);
  if (found === undefined) return undefined;
  // A leading '-' could be read as an option of `exec` (bash's -a, -c, -l; FreeBSD sh's `--`): the
  // file's absolute path cannot be. It is then the command's argv[0] too, and what a script's
  // interpreter is handed (found on a PATH of absolute directories, the same as `spawn` hands it).
  if (command.startsWith('-')) return ['-c', HOLD_SCRIPT, 'sh', found.file, ...args];
  if (found.searchPath !== undefined) return ['-c', HOLD_SCRIPT_SEARCHING, 'sh', found.searchPath, command, ...args];
  return ['-c', HOLD_SCRIPT, 'sh', command, ...args];
}

/**
 * The file `spawn` would run for `command`, and the search path the shell must be given to find it
 * too (the child has no `PATH`); undefined if it would not run or where that is not known.
 */
function whatSpawnRuns(command: string, directory: string, path: string | undefined): { file: string; searchPath?: string } | undefined {
  if (command.includes('/')) {
    const file = resolve(directory, command);
    return execOutcome(file, directory) === 'may run' ? { file } : undefined;
  }
  const searchPath = path ?? defaultSearchPath();
  if (searchPath === undefined) return undefined;
  // Both `spawn` and the shell's `exec` go on along it past a file that is missing or not executable.
  // `spawn` (the C library's search) stops at any other failure, which the shell goes on past: one
  // seen here (a symbolic link loop) is left to `spawn` to report. One not seen here (the file being
  // written, ETXTBSY; a `#!` chain too long for the kernel) is a known difference (README, "Command
  // tools and `spawn`"): held, a later file of that name runs.
  for (const candidate of searchPath.split(delimiter).map((entry) => resolve(directory, entry, command))) {
    const outcome = execOutcome(candidate, directory);
    if (outcome === 'fails') return undefined;
    if (outcome === 'may run') return path === undefined ? { file: candidate, searchPath } : { file: candidate };
  }
  return undefined;
}

/**
 * A `#!` interpreter name that ends within this many bytes is read the same by every Linux: before
 * 5.1 the kernel read 128 bytes and cut a longer line short; since, 256, and a name it cannot see the
 * end of is no interpreter (ENOEXEC: the C library runs the file with /bin/sh).
 */
const SHEBANG_NAME_LIMIT = 127;
const SHEBANG_LINE_LIMIT = 256;
/** Every Linux follows this many `#!` in a row (before 5.8, four; since, five). */
const SHEBANG_DEPTH_LIMIT = 4;

/**
 * What `exec` of `path` does, as far as is certain: 'missing' when it fails with an error a `PATH`
 * search goes on past (ENOENT, ENOTDIR, EACCES: the file, a script's `#!` interpreter or an ELF
 * binary's loader is not there or not an executable file), 'fails' when it fails with one that ends
 * the search (ELOOP, ENAMETOOLONG), else 'may run'. Only then can the command be spawned outright
 * (`spawn` reports the failure as before): whatever is in doubt is held, as a command that runs must
 * be. So a `#!` line the kernels could read otherwise (a NUL byte in it, a name not ended within
 * `SHEBANG_NAME_LIMIT`, no name at all: the C library runs such a file with /bin/sh, and so does the
 * shell's `exec`), or a chain of more than `SHEBANG_DEPTH_LIMIT` scripts, is 'may run'. Only the `#!`
 * line, or the ELF headers and loader path, are read. A file that cannot be read is left to `exec`
 * (a binary needs only execute permission).
 */
function execOutcome(path: string, directory: string, depth = 0): 'may run' | 'missing' | 'fails' {
  const file = fileOutcome(path);
  if (file !== 'may run') return file;
  const interpreter = interpreterOf(path);
  if (interpreter === undefined) return 'may run';
  // A relative path is found from the cwd of the process, as the kernel does.
  if (interpreter.kind === 'loader') return fileOutcome(resolve(directory, interpreter.path));
  if (interpreter.path === undefined || depth >= SHEBANG_DEPTH_LIMIT) return 'may run';
  return execOutcome(resolve(directory, interpreter.path), directory, depth + 1);
}

/**
 * What runs first on `exec` of `path`: the interpreter named on the `#!` line it starts with
 * (`path` undefined where the kernels might read it otherwise, or find none), or the loader an ELF
 * binary names; undefined for neither, or a file that cannot be read.
 */
function interpreterOf(path: string): { kind: 'script'; path: string | undefined } | { kind: 'loader'; path: string } | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const head = Buffer.alloc(SHEBANG_LINE_LIMIT);
    const length = readSync(fd, head, 0, head.length, 0);
    if (length < 2 || head[0] !== 0x23 || head[1] !== 0x21) {
      const loader = elfInterpreter(fd);
      return loader === undefined ? undefined : { kind: 'loader', path: loader };
    }
    return { kind: 'script', path: shebangName(head.subarray(0, length)) };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The interpreter a `#!` line names, as the kernel reads it: spaces and tabs around it, nothing else
 * (a '\r' is part of it). Undefined unless it is clean: a name, ended within `SHEBANG_NAME_LIMIT` by
 * a space, a tab, the line's end or the file's (a NUL byte ends it for the kernel, which older ones
 * read as no name at all).
 */
function shebangName(head: Buffer): string | undefined {
  const isBlank = (byte: number | undefined) => byte === 0x20 || byte === 0x09;
  let start = 2;
  while (isBlank(head[start])) start++;
  let end = start;
  while (end < head.length && !isBlank(head[end]) && head[end] !== 0x0a && head[end] !== 0x00) end++;
  if (end === start || end >= SHEBANG_NAME_LIMIT || head[end] === 0x00) return undefined;
  return head.subarray(start, end).toString('latin1');
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Errors of `stat` or `access` that `exec` of the same path meets too: ones a `PATH` search goes on
 * past, and ones that end it.
 */
const PASSED_OVER = new Set(['ENOENT', 'ENOTDIR', 'EACCES']);
const SEARCH_ENDING = new Set(['ELOOP', 'ENAMETOOLONG']);

/** Whether `path` is an executable file, as `execOutcome` tells it ('may run' where in doubt). */
function fileOutcome(path: string): 'may run' | 'missing' | 'fails' {
  try {
    // Not a regular file (a directory, a FIFO): exec fails with EACCES.
    if (!statSync(path).isFile()) return 'missing';
    accessSync(path, constants.X_OK);
    return 'may run';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (PASSED_OVER.has(code)) return 'missing';
    return SEARCH_ENDING.has(code) ? 'fails' : 'may run';
  }
}
