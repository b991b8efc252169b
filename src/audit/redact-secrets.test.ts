import { describe, expect, it } from 'vitest';
import { redactSecrets } from './redact-secrets.js';

describe('redactSecrets', () => {
  it('hides the values of credential-looking keys at any depth and keeps everything else', () => {
    const input = {
      service: 'api',
      apiKey: 'sk-live-1',
      api_key: 'sk-live-2',
      'X-API-KEY': 'sk-live-3',
      headers: { Authorization: 'Bearer abc', accept: 'json' },
      steps: [{ password: 'hunter2', user: 'root' }, 'plain', 3, null],
      github_token: { nested: 'also hidden' },
      clientSecret: 'shh',
    };
    expect(redactSecrets(input)).toEqual({
      service: 'api',
      apiKey: '[redacted]',
      api_key: '[redacted]',
      'X-API-KEY': '[redacted]',
      headers: { Authorization: '[redacted]', accept: 'json' },
      steps: [{ password: '[redacted]', user: 'root' }, 'plain', 3, null],
      github_token: '[redacted]',
      clientSecret: '[redacted]',
    });
  });

  it('leaves the caller\'s value untouched', () => {
    const input = { token: 'abc' };
    redactSecrets(input);
    expect(input).toEqual({ token: 'abc' });
  });

  it('passes plain values through and survives a cycle', () => {
    expect(redactSecrets('token=abc')).toBe('token=abc');
    expect(redactSecrets(undefined)).toBeUndefined();
    const looped: Record<string, unknown> = { name: 'x' };
    looped.self = looped;
    expect(redactSecrets(looped)).toEqual({ name: 'x', self: '[circular]' });
  });

  it('keeps a value that appears twice, which is not a cycle', () => {
    const shared = { region: 'eu' };
    expect(redactSecrets({ a: shared, b: shared })).toEqual({ a: { region: 'eu' }, b: { region: 'eu' } });
  });
});
