import { describe, expect, it } from 'vitest';
import { isStoreUnavailable } from './store-unavailable.js';
import { ReplyError, WriteNotSentError, writeDidNotRun } from './write-not-run.js';

describe('writeDidNotRun', () => {
  it('is true for an error reply from Redis and for a failure before the write was sent', () => {
    expect(writeDidNotRun(new ReplyError("OOM command not allowed when used memory > 'maxmemory'."))).toBe(true);
    expect(writeDidNotRun(new WriteNotSentError(new Error('Connection is closed.')))).toBe(true);
  });

  it('is false for a connection lost or a command timed out (the write may have run)', () => {
    expect(writeDidNotRun(new Error('Connection is closed.'))).toBe(false);
    expect(writeDidNotRun(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    expect(writeDidNotRun(new Error('Command timed out'))).toBe(false);
  });

  it('keeps a not-sent failure retryable as the failure itself was', () => {
    expect(isStoreUnavailable(new WriteNotSentError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })))).toBe(true);
    expect(isStoreUnavailable(new WriteNotSentError(new Error('Connection is closed.')))).toBe(true);
    expect(isStoreUnavailable(new WriteNotSentError(new Error('a bug')))).toBe(false);
  });
});
