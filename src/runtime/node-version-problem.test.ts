import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { nodeVersionProblem, RECOMMENDED_NODE_MAJOR } from './node-version-problem.js';

describe('nodeVersionProblem', () => {
  it.each(['20.11.1', 'v20.11.1', '18.0.0', '21.7.3'])('asks for Node 22 and names the version it found in %s', (version) => {
    const problem = nodeVersionProblem(version);
    expect(problem).toMatch(/^countersign needs Node\.js 22 or newer \(found v\d+\.\d+\.\d+\)\./);
    expect(problem).toContain(`(found v${version.replace(/^v/, '')})`);
    expect(problem).toContain('Install Node.js 24 (with nvm: `nvm install` in this folder reads .nvmrc)');
  });

  it('recommends the Node.js that .nvmrc pins', () => {
    const pinned = readFileSync(new URL('../../.nvmrc', import.meta.url), 'utf8').trim();
    expect(String(RECOMMENDED_NODE_MAJOR)).toBe(pinned);
  });

  it('asks an early Node 22 for the minor version the HTTP client needs', () => {
    expect(nodeVersionProblem('22.11.0')).toMatch(/^countersign needs Node\.js 22\.19 or newer \(found v22\.11\.0\)\./);
  });

  it.each(['22.19.0', '22.23.3', '23.0.0', '24.1.0', '100.0.0'])('lets %s through', (version) => {
    expect(nodeVersionProblem(version)).toBeUndefined();
  });

  it('lets an unreadable version through rather than refuse to start', () => {
    expect(nodeVersionProblem('nightly')).toBeUndefined();
  });
});
