import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MINIMUM_NODE_VERSION } from '../../src/runtime/node-version-problem.js';
import { buildIsolatedBot } from './child-bot.js';

/**
 * The real entry point on a Node.js that is too old must say which version it needs, and exit,
 * before any dependency runs: on Node 20 the Slack libraries otherwise crash inside undici with an
 * error that names no version.
 */

/** A `node` older than the minimum on this machine (Debian's, say), if there is one. */
function findOldNode(): string | undefined {
  const directories = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  for (const directory of new Set(directories.filter((entry) => entry !== ''))) {
    const candidate = join(directory, 'node');
    if (!existsSync(candidate)) continue;
    const version = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (Number(version.split('.')[0]) < MINIMUM_NODE_VERSION.major) return candidate;
  }
  return undefined;
}

// Writes a preload that makes this Node report an old version, and on exit lists the CommonJS
// dependencies that finished evaluating: none may, if the check really runs first.
function writeOldVersionPreload(directory: string): string {
  const path = join(directory, 'pretend-node-20.mjs');
  writeFileSync(
    path,
    `import { createRequire } from 'node:module';
Object.defineProperty(process.versions, 'node', { value: '20.11.1' });
const require = createRequire(import.meta.url);
process.on('exit', () => {
  const evaluated = Object.entries(require.cache).filter(([path, module]) => path.includes('node_modules') && module?.loaded).map(([path]) => path);
  process.stderr.write('evaluated dependencies: ' + JSON.stringify(evaluated) + '\\n');
});
`,
  );
  return path;
}

// No Slack or OpenAI settings: if the check did not stop it, the bot would try to start (and be
// killed by the timeout), which the assertions below then report.
const run = (executable: string, argv: string[]) =>
  spawnSync(executable, argv, { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } });

describe('the entry point on an old Node.js', () => {
  let mainJs: string;
  beforeAll(() => {
    mainJs = buildIsolatedBot();
  }, 120_000);

  it('says it needs Node 22 and exits 1 before any dependency is evaluated', () => {
    const result = run(process.execPath, ['--import', writeOldVersionPreload(dirname(mainJs)), mainJs]);

    expect(result.stderr).toContain('countersign needs Node.js 22 or newer (found v20.11.1)');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('evaluated dependencies: []');
  });

  const oldNode = findOldNode();
  it.skipIf(oldNode === undefined)(`says so on a real old Node.js too (${oldNode ?? 'none found'})`, () => {
    const result = run(oldNode!, [mainJs]);

    expect(result.stderr).toMatch(/^countersign needs Node\.js 22 or newer \(found v\d+\.\d+\.\d+\)/);
    expect(result.stderr).not.toContain('TypeError');
    expect(result.status).toBe(1);
  });
});
