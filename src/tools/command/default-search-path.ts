import { readFileSync } from 'node:fs';

/** glibc's `confstr(_CS_PATH)` on Linux (`getconf PATH`), what its `execvp` searches without a PATH. */
const GLIBC_SEARCH_PATH = '/bin:/usr/bin';
/** musl's `execvp` without a PATH (src/process/execvp.c). */
const MUSL_SEARCH_PATH = '/usr/local/bin:/bin:/usr/bin';

let known: { searchPath: string | undefined } | undefined;

/**
 * Where `spawn` looks a command up (a name without `/`) when the child's environment has no `PATH`.
 * On Linux, Node (libuv 1.x, src/unix/process.c) sets the child's environment and calls the C
 * library's `execvp`, which then searches its own default: glibc's and musl's differ, and neither
 * is the shell's (dash's includes the `sbin` directories and `/usr/local/bin`). Undefined where it is
 * not known (another system or C library): such a command is not held.
 */
export function defaultSearchPath(): string | undefined {
  known ??= { searchPath: process.platform === 'linux' ? searchPathOf(linkedCLibrary()) : undefined };
  return known.searchPath;
}

function searchPathOf(library: 'glibc' | 'musl' | undefined): string | undefined {
  if (library === 'glibc') return GLIBC_SEARCH_PATH;
  if (library === 'musl') return MUSL_SEARCH_PATH;
  return undefined;
}

/** The C library this process runs on, from the files it has mapped (musl's loader is its libc). */
function linkedCLibrary(): 'glibc' | 'musl' | undefined {
  let maps: string;
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return undefined;
  }
  if (/\/ld-musl-[^/\n]*\.so\.1$/m.test(maps)) return 'musl';
  if (/\/libc\.so\.6$/m.test(maps)) return 'glibc';
  return undefined;
}
