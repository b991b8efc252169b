import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluatedSpecifiers } from './import-specifiers.js';

/**
 * The thread that serves Slack (`src/main.ts` and what it imports before it branches) acks every
 * request; everything its heap holds, each full collection on that thread walks, in the ack's path.
 * So the entry loads the bot, the sandbox and their clients only on the path that runs them, with a
 * dynamic `import()`. Measured: the sandbox alone put 30 MB in the front's heap, Bolt's index 9 MB.
 */
const ROOT = resolve(import.meta.dirname, '../..');

/** Every source file and package a process evaluates from `entry` before any dynamic import. */
function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of evaluatedSpecifiers(readFileSync(join(ROOT, file), 'utf8'))) {
      if (!specifier.startsWith('.')) {
        packages.add(specifier);
        continue;
      }
      const target = relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, '.ts');
      if (!existsSync(join(ROOT, target))) throw new Error(`${file} imports ${specifier}, which is not a source file`);
      visit(target);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('what the Slack front thread loads', () => {
  const { files, packages } = staticGraph('src/main.ts');

  it('follows the entry into the front (the walk itself works)', () => {
    expect(files).toContain('src/slack/front/slack-front-server.ts');
    expect(files).toContain('src/config/environment.ts');
  });

  // Whether to run the sandbox at all: the question and where its page would be (node builtins only).
  const SANDBOX_FILES_THE_ENTRY_ASKS = new Set(['src/sandbox/wants-sandbox.ts', 'src/sandbox/package-root.ts']);

  it('loads neither the bot nor the sandbox', () => {
    expect([...files].filter((file) => file === 'src/create-bot.ts' || file === 'src/bot-thread.ts' || (file.startsWith('src/sandbox/') && !SANDBOX_FILES_THE_ENTRY_ASKS.has(file)))).toEqual([]);
  });

  it("loads none of the bot's clients, and only Bolt's request functions", () => {
    const heavy = [...packages].filter((name) => ['ai', 'ioredis', 'undici', '@slack/bolt', '@slack/web-api'].includes(name) || name.startsWith('@ai-sdk/'));
    expect(heavy).toEqual([]);
    expect([...packages].filter((name) => name.startsWith('@slack/'))).toEqual(['@slack/bolt/dist/receivers/HTTPModuleFunctions.js']);
  });
});
