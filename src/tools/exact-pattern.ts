import { RE2JS } from 're2js';
import type { SchemaPattern } from './schema-pattern.js';

export type CompiledExactPattern = { kind: 'linear'; pattern: SchemaPattern } | { kind: 'refused'; reason: string };

/** What `\s` means in JavaScript: ASCII whitespace plus the Unicode spaces, line separators and BOM. */
const JS_WHITESPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** What JavaScript's `.` does not match without the `s` flag. */
const JS_LINE_TERMINATORS = '\\n\\r\\u2028\\u2029';
/**
 * After a backslash: `\u{…}`, or `\uXXXX` with the `\uXXXX` that may follow it (under the `u` flag a
 * high and a low surrogate written this way are one code point).
 */
const CODE_POINT_ESCAPE = /u(?:\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4})(?:\\u([0-9a-fA-F]{4}))?)/y;
/** After a backslash: a Unicode property, `\p{…}` or `\P{…}`. */
const PROPERTY_ESCAPE = /[pP]\{[^}]*\}/y;
const SURROGATE = { first: 0xd800, lastHigh: 0xdbff, firstLow: 0xdc00, last: 0xdfff };

/**
 * An operator's pattern from the config (a command parameter's `pattern`, a policy condition's
 * `matches`), run on RE2's linear-time engine: the text it checks is the model's, and a
 * backtracking `RegExp` such as `([a-z0-9]+-?)*` holds the bot's only thread for hours on 35
 * characters. Unlike a schema's pattern (`compileSchemaPattern`), which is skipped when RE2 cannot
 * run it, this one decides approvals and argv, so it must mean exactly what JavaScript's `u` flag
 * makes it mean, or be refused when the config loads:
 * - `\s`, `\S` and `.` are rewritten to JavaScript's sets (RE2's `\s` is ASCII only, its `.` also
 *   matches `\r`, U+2028 and U+2029); `\d`, `\w`, `\b` are ASCII in both;
 * - `[` inside a class is escaped, since RE2 would read `[[:digit:]` as a POSIX class;
 * - a surrogate pair written `\uD83D\uDE00` is joined into its code point (`\u{1F600}`), which is what
 *   it is under the `u` flag: RE2 would read two lone surrogates and never match the character;
 * - lookahead, lookbehind, backreferences, `\S` inside a class, lone surrogates, Unicode properties
 *   RE2 does not know (`\p{Script=Greek}`, `\p{Letter}`) and repeats over 1000 are refused.
 */
export function compileExactPattern(source: string): CompiledExactPattern {
  try {
    // Compiling is safe: only matching backtracks.
    new RegExp(source, 'u');
  } catch {
    return { kind: 'refused', reason: 'is not a valid regular expression' };
  }
  const rewritten = rewriteForRe2(source);
  if (rewritten.kind === 'refused') return rewritten;
  try {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(rewritten.source));
    return { kind: 'linear', pattern: { test: (value) => compiled.test(value), toString: () => source } };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return {
      kind: 'refused',
      reason: `cannot run on the linear-time engine (${detail}); lookahead, lookbehind, backreferences and repeats over 1000 are not supported`,
    };
  }
}

type Rewritten = { kind: 'rewritten'; source: string } | { kind: 'refused'; reason: string };

/** Walks a valid `u`-flag pattern once, tracking character classes (which do not nest under `u`). */
function rewriteForRe2(source: string): Rewritten {
  let result = '';
  let inClass = false;
  let index = 0;
  while (index < source.length) {
    const character = String.fromCodePoint(source.codePointAt(index) ?? 0);
    index += character.length;
    if (character === '\\') {
      const special = codePointEscape(source, index) ?? propertyEscape(source, index);
      if (special?.kind === 'refused') return special;
      if (special) {
        index += special.length;
        result += special.source;
        continue;
      }
      const escaped = String.fromCodePoint(source.codePointAt(index) ?? 0);
      index += escaped.length;
      const replacement = rewriteEscape({ escaped, inClass });
      if (replacement.kind === 'refused') return replacement;
      result += replacement.source;
    } else if (isSurrogate(character.codePointAt(0) ?? 0)) {
      return loneSurrogate(`\\u${(character.codePointAt(0) ?? 0).toString(16).toUpperCase()}`);
    } else if (inClass) {
      if (character === ']') inClass = false;
      result += character === '[' ? '\\[' : character;
    } else if (character === '[') {
      inClass = true;
      result += character;
    } else {
      result += character === '.' ? `[^${JS_LINE_TERMINATORS}]` : character;
    }
  }
  return { kind: 'rewritten', source: result };
}

type SpecialEscape = { kind: 'rewritten'; source: string; length: number } | { kind: 'refused'; reason: string };

/** A `\u` escape at `index` (just after its backslash) as RE2 must read it, or undefined for another escape. */
function codePointEscape(source: string, index: number): SpecialEscape | undefined {
  CODE_POINT_ESCAPE.lastIndex = index;
  const match = CODE_POINT_ESCAPE.exec(source);
  if (!match) return undefined;
  const [whole, braced, first, second] = match;
  if (braced !== undefined) {
    const codePoint = Number.parseInt(braced, 16);
    return isSurrogate(codePoint) ? loneSurrogate(`\\u{${braced}}`) : { kind: 'rewritten', source: `\\${whole}`, length: whole.length };
  }
  const high = Number.parseInt(first ?? '', 16);
  const low = second === undefined ? undefined : Number.parseInt(second, 16);
  if (low !== undefined && high >= SURROGATE.first && high <= SURROGATE.lastHigh && low >= SURROGATE.firstLow && low <= SURROGATE.last) {
    const codePoint = (high - SURROGATE.first) * 0x400 + (low - SURROGATE.firstLow) + 0x10000;
    return { kind: 'rewritten', source: `\\u{${codePoint.toString(16).toUpperCase()}}`, length: whole.length };
  }
  // Only the first escape is this one; a second is read on its own next.
  if (isSurrogate(high)) return loneSurrogate(`\\u${first}`);
  return { kind: 'rewritten', source: `\\u${first}`, length: 1 + (first ?? '').length };
}

/** A `\p{…}` or `\P{…}` at `index`, kept when RE2 knows the property, or undefined for another escape. */
function propertyEscape(source: string, index: number): SpecialEscape | undefined {
  PROPERTY_ESCAPE.lastIndex = index;
  const property = PROPERTY_ESCAPE.exec(source)?.[0];
  if (property === undefined) return undefined;
  try {
    RE2JS.compile(`\\${property}`);
  } catch {
    return {
      kind: 'refused',
      reason: `uses the Unicode property \\${property}, which the linear-time engine does not know; general categories by their short names work (\\p{L}, \\p{Lu}, \\p{Nd}), scripts (\\p{Script=…}), long names such as \\p{Letter} and \\p{ASCII} do not`,
    };
  }
  return { kind: 'rewritten', source: `\\${property}`, length: property.length };
}

function isSurrogate(codePoint: number): boolean {
  return codePoint >= SURROGATE.first && codePoint <= SURROGATE.last;
}

function loneSurrogate(written: string): { kind: 'refused'; reason: string } {
  return { kind: 'refused', reason: `uses ${written}, half of a surrogate pair, which the linear-time engine cannot match on its own; write the whole character or its code point (\\u{1F600})` };
}

function rewriteEscape({ escaped, inClass }: { escaped: string; inClass: boolean }): Rewritten {
  switch (escaped) {
    case 's':
      return { kind: 'rewritten', source: inClass ? JS_WHITESPACE : `[${JS_WHITESPACE}]` };
    case 'S':
      // A complement cannot join other members of an RE2 class.
      if (inClass) return { kind: 'refused', reason: 'uses \\S inside a character class, which the linear-time engine cannot express; write (?:\\S|[…]) instead' };
      return { kind: 'rewritten', source: `[^${JS_WHITESPACE}]` };
    case 'b':
      // Backspace inside a class, a word boundary outside (ASCII in both engines).
      return { kind: 'rewritten', source: inClass ? '\\x08' : '\\b' };
    case 'k':
      // re2js would read `\k<name>` as the literal text `k<name>`.
      return { kind: 'refused', reason: 'uses a backreference (\\k<name>), which the linear-time engine cannot run' };
    default:
      return { kind: 'rewritten', source: `\\${escaped}` };
  }
}
