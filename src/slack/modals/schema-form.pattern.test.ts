import { describe, expect, it } from 'vitest';
import { interruptIfStuck } from '../../../test/helpers/interrupt-if-stuck.js';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, type ParseResult, parseSchemaForm } from './schema-form.js';
import { stateFromInput } from './view-state.test-support.js';

/** The approver opens Edit on the model's `input` and submits it unchanged. */
function submitUnchanged(property: JsonSchema, input: { x: unknown }): ParseResult {
  const form = buildSchemaForm({ schema: { type: 'object', properties: { x: property }, required: ['x'] }, initialValue: input });
  return interruptIfStuck(() => parseSchemaForm({ form, stateValues: stateFromInput(form, input) }));
}

function errorOf(result: ParseResult): string | undefined {
  return result.ok ? undefined : Object.values(result.errors).join('; ');
}

describe('a tool schema pattern (MCP schemas are tool output, the value is the model input)', () => {
  it('is checked against a 3,000-character input without catastrophic backtracking', () => {
    // A backtracking engine needs about 2^2999 steps to refuse this; the bot thread would never return.
    const hostile = { type: 'string', pattern: '^(a+)+$' } as const;
    expect(errorOf(submitUnchanged(hostile, { x: `${'a'.repeat(2999)}!` }))).toBe('Must match ^(a+)+$');
    expect(submitUnchanged(hostile, { x: 'a'.repeat(3000) })).toEqual({ ok: true, value: { x: 'a'.repeat(3000) } });
  });

  it('keeps ECMA-262 syntax: escapes, named groups, lookbehind', () => {
    expect(errorOf(submitUnchanged({ type: 'string', pattern: '^\\u00e9\\/(?<tag>v\\d+)$' }, { x: 'é/v12' }))).toBeUndefined();
    expect(errorOf(submitUnchanged({ type: 'string', pattern: '^\\u00e9\\/(?<tag>v\\d+)$' }, { x: 'e/v12' }))).toBe('Must match ^\\u00e9\\/(?<tag>v\\d+)$');
    expect(errorOf(submitUnchanged({ type: 'string', pattern: '(?<!un)safe$' }, { x: 'unsafe' }))).toBe('Must match (?<!un)safe$');
  });

  it('that the linear engine cannot run (lookahead, backreference) is skipped; the other checks still apply', () => {
    const lookahead = { type: 'string', minLength: 3, pattern: '^(?!admin$)' } as const;
    expect(submitUnchanged(lookahead, { x: 'admin' })).toEqual({ ok: true, value: { x: 'admin' } });
    expect(errorOf(submitUnchanged(lookahead, { x: 'ad' }))).toBe('Must be at least 3 characters');
    expect(submitUnchanged({ type: 'string', pattern: '^(a)\\1$' }, { x: 'ab' })).toEqual({ ok: true, value: { x: 'ab' } });
  });
});
