import { describe, expect, it } from 'vitest';
import { inputHash } from '../../approvals/input-version.js';
import { evaluation, makeStep } from '../../approvals/pending-step.test-support.js';
import { APPROVAL_CARD_TEXT_BUDGET, buildApprovalCard } from './approval-card.js';
import { findBlockKitViolations, measureBlockText } from './limits.js';

/**
 * The card gives each call's arguments a share of an 11,000-character budget, but the lines listing
 * an edited version's changes ("Changed from the model's input", up to six lines of 200 characters
 * per call) are outside it: they are counted as "fixed" and never cut to fit. Ten calls of a step
 * (the model's choice), each edited by an approver who changed a few long values, give a card of
 * ~17,000 characters: Slack refuses it (`msg_blocks_too_long`), the edit's chat.update fails (only
 * logged, `card-update-failed`), and the card keeps the previous version's buttons, whose clicks are
 * refused as stale.
 */
describe('a step whose calls were edited', () => {
  it('stays within the card text budget', () => {
    const fields = Array.from({ length: 6 }, (_, index) => `setting_${index}`);
    const model = Object.fromEntries(fields.map((name) => [name, `model value ${'m'.repeat(280)}`]));
    const edited = Object.fromEntries(fields.map((name) => [name, `approver value ${'a'.repeat(280)}`]));
    const step = makeStep(Array.from({ length: 10 }, (_, index) => ({ approvalId: `ap${index}`, input: model })));
    for (const call of step.calls) {
      call.versions = [...(call.versions ?? []), { number: 1, input: edited, inputHash: inputHash(edited), editedBy: 'U0BOB', at: step.createdAt + 1, policy: evaluation() }];
    }
    const card = buildApprovalCard({ step });
    expect(findBlockKitViolations(card.blocks, { surface: 'message' })).toEqual([]);
    expect(measureBlockText(card.blocks)).toBeLessThanOrEqual(APPROVAL_CARD_TEXT_BUDGET);
  });
});
