import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultSearchPath } from './default-search-path.js';

const maps = process.platform === 'linux' ? readFileSync('/proc/self/maps', 'utf8') : '';
const onGlibc = /\/libc\.so\.6$/m.test(maps) && !/\/ld-musl-/m.test(maps);

describe.skipIf(!onGlibc)('defaultSearchPath on glibc', () => {
  it("is glibc's confstr(_CS_PATH), which its execvp searches when the environment has no PATH", () => {
    expect(defaultSearchPath()).toBe(execFileSync('getconf', ['PATH'], { encoding: 'utf8' }).trim());
  });
});
