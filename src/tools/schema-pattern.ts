import { RE2JS } from 're2js';

/** What the form and ajv ask of a pattern: RegExp's unanchored `test`. */
export interface SchemaPattern {
  test(value: string): boolean;
  /** The pattern's source: ajv's key for sharing one compiled pattern between schemas. */
  toString(): string;
}

export type CompiledSchemaPattern =
  | { kind: 'linear'; pattern: SchemaPattern }
  /** Valid ECMA-262 the linear engine cannot run: lookahead, backreferences, very large repeats. */
  | { kind: 'unsupported'; reason: string }
  | { kind: 'invalid'; reason: string };

/**
 * A JSON Schema `pattern`, compiled for RE2's linear-time engine (re2js, pure JS). Schemas come from
 * MCP servers or the model and the text checked is the model's input, so a backtracking `RegExp`
 * could hold the bot's only thread for minutes: `^(a+)+$` against 30 `a`s and a `!`.
 * ECMA-262 syntax is translated first (`\u00e9`, `\u{1F600}`, `(?<name>…)`, `[^]`); lookbehinds are
 * allowed, since re2js runs them in linear time too. `\s`, `\w`, `\d` are RE2's ASCII classes.
 */
export function compileSchemaPattern(source: string): CompiledSchemaPattern {
  try {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(source), RE2JS.LOOKBEHINDS);
    return { kind: 'linear', pattern: { test: (value) => compiled.test(value), toString: () => source } };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return isEcmaPattern(source) ? { kind: 'unsupported', reason } : { kind: 'invalid', reason };
  }
}

function isEcmaPattern(source: string): boolean {
  // Compiling is safe: only matching backtracks.
  for (const flags of ['u', '']) {
    try {
      new RegExp(source, flags);
      return true;
    } catch {
      // Try the next dialect; JSON Schema patterns are ECMA-262 but authors write PCRE too.
    }
  }
  return false;
}
