import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.js';
import { readHookDecision, resolveApprovalHook, type ApprovalHookOption, type ApprovalHookRequest } from './approval-hook.js';

describe('resolveApprovalHook', () => {
  it('names a function hook after the function, with the default time limit', () => {
    expect(resolveApprovalHook(async function changeFreeze() { return undefined; })).toMatchObject({ name: 'changeFreeze', timeoutMs: 5_000 });
    expect(resolveApprovalHook(undefined)).toBeUndefined();
  });

  it('accepts a function whatever its incidental JavaScript name (bound, minified), naming it onApprovalRequest then', () => {
    const policyService = { decide(_request: ApprovalHookRequest) { return undefined; } };
    // `onApprovalRequest: policyService.decide.bind(policyService)`: the function's name is "bound decide".
    expect(resolveApprovalHook(policyService.decide.bind(policyService))).toMatchObject({ name: 'onApprovalRequest' });
    // A bundler names functions like `$e`.
    const minified = { $e: () => undefined }.$e;
    expect(resolveApprovalHook(minified)).toMatchObject({ name: 'onApprovalRequest' });
  });

  const noOpinion = () => undefined;
  it.each<[ApprovalHookOption, string]>([
    [{ name: 'has space', decide: noOpinion }, 'onApprovalRequest.name'],
    [{ name: 'ok', decide: noOpinion, timeoutMs: 0 }, 'onApprovalRequest.timeoutMs'],
    [{ name: 'ok', decide: noOpinion, timeoutMs: 2 ** 31 }, 'onApprovalRequest.timeoutMs'],
    [{ name: 'ok', decide: 'approve' as never }, 'onApprovalRequest.decide'],
  ])('refuses a bad option, naming the field (%o)', (option, field) => {
    try {
      resolveApprovalHook(option);
    } catch (error) {
      expect(ConfigError.isInstance(error) && error.problems[0]?.field).toBe(field);
      return;
    }
    throw new Error('expected a ConfigError');
  });
});

describe('readHookDecision', () => {
  it('reads the three answers and calls anything else malformed', () => {
    expect(readHookDecision(undefined)).toBeUndefined();
    expect(readHookDecision({ decision: 'approve' })).toEqual({ decision: 'approve' });
    expect(readHookDecision({ decision: 'deny', reason: '  freeze  ' })).toEqual({ decision: 'deny', reason: 'freeze' });
    expect(readHookDecision({ decision: 'deny' })).toEqual({ decision: 'deny', reason: 'denied by policy hook' });
    expect(readHookDecision({ decision: 'deny', reason: 'x'.repeat(600) })).toEqual({ decision: 'deny', reason: 'x'.repeat(500) });
    expect(readHookDecision('approve')).toBe('malformed');
    expect(readHookDecision({ decision: 'yes' })).toBe('malformed');
  });
});
