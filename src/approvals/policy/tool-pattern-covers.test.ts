import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileToolPattern } from './tool-pattern.js';
import { toolPatternCovers, toolPatternsMayOverlap } from './tool-pattern-covers.js';

describe('toolPatternCovers', () => {
  it.each([
    ['ops.**', 'ops.*', true],
    ['ops.*', 'ops.**', false],
    ['**', '*', true],
    ['*', '**', false],
    ['**', 'k8s.delete_pod', true],
    ['*', 'k8s.delete_pod', false],
    ['restart_service', 'restart_service', true],
    ['restart_service', 'restart_api', false],
    ['restart_*', 'restart_service', true],
    ['restart_service', 'restart_*', false],
    ['restart_*', 'restart_?*', true],
    ['restart_?*', 'restart_*', false],
    ['*', '?', true],
    ['?', '*', false],
    ['*_*', 'restart_*', true],
    ['**.delete_*', 'github.repos.delete_*', true],
    ['*.delete_*', 'github.repos.delete_*', false],
    ['**', '*.*', true],
    ['*.*', '**', false],
    ['a**b', 'a*.*b', true],
    ['a*.*b', 'a**b', false],
    ['??', '*', false],
    ['*a*', '*a', true],
  ])('%s covers %s: %s', (wider, narrower, covers) => {
    expect(toolPatternCovers(wider, narrower)).toBe(covers);
  });

  it('gives up on a contrived pair, answering false (not proven), quickly', () => {
    // `**aa` then 23 `?` is within `**a` then 24 `?`, but the wider one's places to track double with each `?`.
    const questions = '?'.repeat(24);
    expect(toolPatternCovers(`**a${questions.slice(0, 4)}`, `**aa${questions.slice(0, 3)}`)).toBe(true);
    const started = performance.now();
    expect(toolPatternCovers(`**a${questions}`, `**aa${questions.slice(1)}`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  // Every name of up to 6 characters over a, b, c and the dot: c stands for any character the
  // patterns do not name. Short patterns differ on some name this short when they differ at all.
  const names = [''];
  for (let length = 1, last = ['']; length <= 6; length += 1) {
    last = last.flatMap((name) => ['a', 'b', 'c', '.'].map((character) => name + character));
    names.push(...last);
  }
  const pattern = fc.array(fc.constantFrom('a', 'b', '.', '*', '**', '?'), { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join(''));

  it('agrees with the matcher: covers exactly when no name the narrower matches escapes the wider', () => {
    fc.assert(
      fc.property(pattern, pattern, (wider, narrower) => {
        const [widerPattern, narrowerPattern] = [compileToolPattern(wider), compileToolPattern(narrower)];
        const escapes = names.some((name) => narrowerPattern.matches(name) && !widerPattern.matches(name));
        expect(toolPatternCovers(wider, narrower)).toBe(!escapes);
      }),
      { numRuns: 500 },
    );
  });

  it('is false for every pair toolPatternsMayOverlap rules out, so skipping those pairs changes no answer', () => {
    expect(toolPatternsMayOverlap('svc_001_*', 'svc_002_*')).toBe(false);
    expect(toolPatternsMayOverlap('restart_*', 'restart_api')).toBe(true);
    expect(toolPatternsMayOverlap('**', 'ops.delete')).toBe(true);
    const prefixed = fc.tuple(fc.constantFrom('', 'a', 'b', 'ab', 'ba', 'a.'), pattern).map(([prefix, rest]) => prefix + rest);
    fc.assert(
      fc.property(prefixed, prefixed, (first, second) => {
        if (toolPatternsMayOverlap(first, second)) return;
        expect(toolPatternCovers(first, second)).toBe(false);
        expect(toolPatternCovers(second, first)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
});
