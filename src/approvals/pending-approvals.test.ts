import { describe, expect, it } from 'vitest';
import { ruleLabel, summarizePendingApprovals } from './pending-approvals.js';
import { CREATED_AT, evaluation, makeStep } from './pending-step.test-support.js';

describe('summarizePendingApprovals', () => {
  it('counts undecided approval calls by the rule of their current version, with the oldest request time', () => {
    const named = evaluation({ rule: { index: 0, name: 'restarts' } });
    const older = makeStep([{ approvalId: 'a', policy: named }, { approvalId: 'q', kind: 'question' }], { createdAt: CREATED_AT - 1000 });
    const newer = makeStep([{ approvalId: 'a', policy: named }, { approvalId: 'b', policy: evaluation({ rule: { index: 3 } }) }, 'decided'], {
      decisions: { decided: { outcome: 'approved', userId: 'UBOB', at: 1 } },
    });
    const closed = makeStep(['a'], { phase: 'complete' });
    expect(summarizePendingApprovals([older, newer, closed])).toEqual([
      { rule: 'restarts', pending: 2, oldestCreatedAt: CREATED_AT - 1000 },
      { rule: 'rules[3]', pending: 1, oldestCreatedAt: CREATED_AT },
    ]);
  });

  it('labels calls no rule covers as default', () => {
    expect(ruleLabel(evaluation({ rule: undefined }))).toBe('default');
  });
});
