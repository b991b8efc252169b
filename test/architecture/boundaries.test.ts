import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluatedSpecifiers, importSpecifiers } from './import-specifiers.js';

/**
 * The arrows of ARCHITECTURE.md, checked: the core never reaches into Slack, and only the store
 * talks to Redis. Tests are held to the same rules as the code next to them.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const CORE = ['src/agent', 'src/approvals', 'src/conversation', 'src/store', 'src/tools'];

function typescriptFiles(directory: string): string[] {
  return readdirSync(join(ROOT, directory), { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return typescriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Where a specifier points: a repository path for relative ones, the package name otherwise. */
function target(file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  return relative(ROOT, resolve(ROOT, dirname(file), specifier));
}

function violations(files: string[], forbidden: (target: string) => boolean): string[] {
  return files.flatMap((file) =>
    importSpecifiers(readFileSync(join(ROOT, file), 'utf8'))
      .filter((specifier) => forbidden(target(file, specifier)))
      .map((specifier) => `${file} imports ${specifier}`),
  );
}

describe('architecture boundaries', () => {
  it('the core (agent, approvals, conversation, store, tools) does not import Slack', () => {
    const files = CORE.flatMap(typescriptFiles);
    expect(files.length).toBeGreaterThan(50);
    expect(violations(files, (path) => path.startsWith('src/slack/') || path.startsWith('@slack/'))).toEqual([]);
  });

  it('only the store imports ioredis', () => {
    const files = typescriptFiles('src').filter((file) => !file.startsWith('src/store/'));
    expect(violations(files, (path) => path === 'ioredis' || path.startsWith('ioredis/'))).toEqual([]);
  });
});

describe('importSpecifiers', () => {
  it('finds every form of import and re-export, and ignores comments', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      'import {',
      '  c,',
      '  type D,',
      "} from '@slack/bolt';",
      "import * as e from 'e';",
      "import './side-effect.js';",
      "export { f } from './f.js';",
      "export * from './g.js';",
      "export type { H } from './h.js';",
      "const i = await import('./i.js');",
      "// import { no } from './commented.js';",
      "/* import { no } from './block-commented.js'; */",
      "const url = 'https://example.com'; // a comment after a URL",
    ].join('\n');
    expect(importSpecifiers(source).sort()).toEqual(['../b.js', './a.js', './f.js', './g.js', './h.js', './i.js', './side-effect.js', '@slack/bolt', 'e'].sort());
    // What evaluating the module loads: no type-only import or re-export, no dynamic import.
    expect(evaluatedSpecifiers(source).sort()).toEqual(['./a.js', './f.js', './g.js', './side-effect.js', '@slack/bolt', 'e'].sort());
  });
});
