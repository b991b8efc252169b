import { describe, expect, it } from 'vitest';
import { describeChanges, diffInputs } from '../approvals/input-diff.js';
import { redactChangeLine } from './redact-change-line.js';

const linesOf = (before: unknown, after: unknown) => describeChanges(diffInputs(before, after)).map(redactChangeLine);

describe('redactChangeLine', () => {
  it('says a secret-looking field changed, was added or removed, without its values', () => {
    expect(linesOf({ password: 'old', apiKey: 'k1' }, { password: 'new', github_token: 't1' })).toEqual([
      'password: "[redacted]" → "[redacted]"',
      'apiKey: "[redacted]" → (removed)',
      'github_token: (added) → "[redacted]"',
    ]);
  });

  it('hides a field under a secret-looking key, and secret-looking keys inside a changed value', () => {
    expect(
      linesOf(
        { auth: { token: { value: 'a' } }, steps: [{ password: 'p1' }] },
        { auth: { token: { value: 'b' } }, steps: [{ password: 'p2', user: 'root' }], headers: { Authorization: 'Bearer x', accept: 'json' } },
      ),
    ).toEqual([
      'auth.token.value: "[redacted]" → "[redacted]"',
      'steps: [{"password":"[redacted]"}] → [{"password":"[redacted]","user":"root"}]',
      'headers: (added) → {"Authorization":"[redacted]","accept":"json"}',
    ]);
  });

  it('keeps lines that name nothing secret-looking, whatever their values say', () => {
    const lines = describeChanges(diffInputs({ namespace: 'prod', note: 'a → b: c' }, { namespace: 'staging', note: 'x: "y" → z' }));
    expect(lines.map(redactChangeLine)).toEqual(lines);
  });

  it('finds the path when keys and values hold ": " and " → "', () => {
    expect(linesOf({ 'a: "x" → "y"': { password: 's: "1" → "2"' } }, { 'a: "x" → "y"': { password: 't → u' } })).toEqual([
      'a: "x" → "y".password: "[redacted]" → "[redacted]"',
    ]);
    expect(linesOf({ note: 'rotate the token → now' }, { note: 'rotate the token: done' })).toEqual(['note: "rotate the token → now" → "rotate the token: done"']);
  });

  it('hides a whole line it cannot read that names something secret-looking', () => {
    expect(redactChangeLine('password was hunter2')).toBe('[redacted] (a change to a secret-looking field)');
    expect(redactChangeLine(`password: ${' → '.repeat(100)}`)).toBe('[redacted] (a change to a secret-looking field)');
  });

  it('changes nothing when applied again', () => {
    const once = linesOf({ password: 'old', headers: {} }, { password: 'new', headers: { Authorization: 'Bearer x' } });
    expect(once.map(redactChangeLine)).toEqual(once);
  });
});
