import { describe, expect, it } from 'vitest';
import type { Grant } from '../../approvals/grant.js';
import { evaluation } from '../../approvals/pending-step.test-support.js';
import { grantBlock } from './grant-block.js';
import { findBlockKitViolations } from './limits.js';

describe('grantBlock', () => {
  it('twenty grants with the longest tool names fit one /countersign grants message', () => {
    const grant: Grant = { grantId: 'g', teamId: 'T1', channel: 'C0OPS', scope: 'thread', toolName: 'x'.repeat(5000), identicalArgumentsOnly: true, evaluation: evaluation(), grantedBy: 'UBOB', createdAt: 1, expiresAt: 2 };
    const blocks = Array.from({ length: 20 }, (_, index) => grantBlock({ grant: { ...grant, grantId: `g${index}` }, actionId: 'revoke' }));
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual([]);
  });
});
