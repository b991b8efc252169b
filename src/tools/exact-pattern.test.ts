import { describe, expect, it } from 'vitest';
import { interruptIfStuck } from '../../test/helpers/interrupt-if-stuck.js';
import { compileExactPattern } from './exact-pattern.js';

const linear = (source: string) => {
  const compiled = compileExactPattern(source);
  if (compiled.kind !== 'linear') throw new Error(`${source} was refused: ${compiled.reason}`);
  return compiled.pattern;
};

const SAMPLES = [
  '',
  'api',
  'api-1',
  'API',
  'prod',
  'prod-eu',
  'a b',
  'a\u00a0b',
  'a\u2003b',
  'a\u2028b',
  'a\rb',
  'a\nb',
  'a\tb',
  '\ufeff',
  'registry.internal/api:1.2',
  'docker.io/api:latest',
  'héllo',
  '😀',
  '😀😀',
  '😃',
  '\\ud83d',
  '[x]',
  '[',
  'd',
  '7',
  'ſ',
  'k',
  '\u212a',
  '\b',
  'x--y',
  'a'.repeat(40),
];

const PATTERNS = [
  '[a-z0-9-]+',
  '^[a-z0-9-]+$',
  '^(?:[a-z0-9]+-?)*$',
  '^registry\\.internal/',
  ':latest$',
  '^prod(-[a-z]+)?$',
  '\\s',
  '\\S+',
  '^\\S+$',
  '[\\s,]',
  '[^\\s]',
  '^.$',
  'a.b',
  '[.]',
  '\\d',
  '\\w+',
  '\\bapi\\b',
  '[\\b]',
  '\\p{L}',
  '^\\p{Lu}',
  '\\u{1F600}',
  '\\u00e9',
  // Under the u flag a surrogate pair written as two escapes is one code point, in a class and under a quantifier too.
  '^\\ud83d\\ude00$',
  '^\\uD83D\\uDE00+$',
  '^[\\uD83D\\uDE00-\\uD83D\\uDE4F]$',
  '^[^\\uD83D\\uDE00]$',
  '\\\\ud83d',
  '(?<name>[a-z]+)-\\d',
  '[[:digit:][\\]]',
  '[^]',
  '[]',
  '(?i:k)',
  '\\v|\\f',
  'a{2,3}',
  '\\/',
  '^$',
];

describe('compileExactPattern', () => {
  // Modifiers like `(?i:k)` are JavaScript from Node 23 (V8 12.5) on; on Node 22 they are not a
  // valid pattern, so there is nothing to compare with (the config refuses them there).
  const understood = PATTERNS.filter((source) => {
    try {
      return new RegExp(source, 'u') instanceof RegExp;
    } catch {
      return false;
    }
  });

  it.each(understood)('matches %j exactly as JavaScript does with the u flag', (source) => {
    const expression = new RegExp(source, 'u');
    const pattern = linear(source);
    for (const sample of SAMPLES) expect([sample, pattern.test(sample)]).toEqual([sample, expression.test(sample)]);
  });

  it('runs a catastrophic pattern on hostile text to the end', () => {
    const pattern = linear('^([a-z0-9]+-?)*$');
    expect(interruptIfStuck(() => pattern.test(`${'a'.repeat(5_000)}!`))).toBe(false);
  });

  it.each([
    ['a(?=b)', /lookahead/],
    ['a(?!b)', /lookahead/],
    ['(?<=a)b', /lookbehind/],
    ['(a)\\1', /backreference/],
    ['(?<x>a)\\k<x>', /backreference/],
    ['[\\Sx]', /\\S inside a character class/],
    ['a{1001}', /repeats over 1000/],
    ['(unclosed', /not a valid regular expression/],
    // A lone surrogate matches half a character in JavaScript; RE2 works on whole code points.
    ['^\\ud83d$', /\\ud83d, half of a surrogate pair/],
    ['\\ude00\\ud83d', /\\ude00, half of a surrogate pair/],
    ['\\u0041\\ude00', /\\ude00, half of a surrogate pair/],
    ['\\u{D83D}', /\\u\{D83D\}, half of a surrogate pair/],
    ['[\\ud83d]', /half of a surrogate pair/],
    ['\ud83d', /half of a surrogate pair/],
    ['\\p{Script=Greek}', /the Unicode property \\p\{Script=Greek\}, which the linear-time engine does not know/],
    ['[\\p{Letter}\\d]', /the Unicode property \\p\{Letter\}/],
    ['\\P{ASCII}', /the Unicode property \\P\{ASCII\}/],
  ])('refuses %j', (source, reason) => {
    const compiled = compileExactPattern(source);
    expect(compiled.kind).toBe('refused');
    expect(compiled.kind === 'refused' && compiled.reason).toMatch(reason);
  });

  it('says why a Unicode property is refused without blaming lookahead or backreferences', () => {
    const compiled = compileExactPattern('^\\p{Letter}+$');
    expect(compiled).toEqual({
      kind: 'refused',
      reason: 'uses the Unicode property \\p{Letter}, which the linear-time engine does not know; general categories by their short names work (\\p{L}, \\p{Lu}, \\p{Nd}), scripts (\\p{Script=…}), long names such as \\p{Letter} and \\p{ASCII} do not',
    });
  });
});
