import { describe, expect, it } from 'vitest';
import { buildApprovalCard } from '../blocks/approval-card.js';
import { inputHash } from '../../approvals/input-version.js';
import { evaluation, makeStep } from '../../approvals/pending-step.test-support.js';
import { buildSchemaForm } from './schema-form.js';

/**
 * The card shows bidi overrides and zero-width characters as `\u202e` so an approver is not fooled
 * by text reordered to look harmless (format-arguments.test.ts: "reveals invisible and
 * bidi-reordering characters an approver could be fooled by"). The Edit form, whose submit button
 * says "Approve & run", prefills the same string raw into a text input, where Slack renders the
 * override: the approver reads reordered text and approves it unchanged.
 */
describe('the Edit form for a string with a right-to-left override', () => {
  const input = { command: 'echo hi\u202E/ fr- mr' };
  const schema = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } as const;

  it('the card reveals the override (for comparison)', () => {
    const card = JSON.stringify(buildApprovalCard({ step: makeStep([{ approvalId: 'ap1', input }]) }).blocks);
    expect(card).toContain('\\\\u202e');
    expect(card).not.toContain('\u202E');
  });

  it('reveals it in the form too, instead of prefilling it raw', () => {
    const form = buildSchemaForm({ schema, initialValue: input });
    expect(JSON.stringify(form.blocks)).not.toContain('\u202E');
  });

  it('and the card\'s list of changes after an edit reveals it as well', () => {
    const edited = { command: 'echo hi', dir: '/srv/\u202Egnigats' };
    const step = makeStep([{ approvalId: 'ap1', input }]);
    const call = step.calls[0]!;
    call.versions = [...(call.versions ?? []), { number: 1, input: edited, inputHash: inputHash(edited), editedBy: 'U0BOB', at: step.createdAt + 1, policy: evaluation() }];
    const card = JSON.stringify(buildApprovalCard({ step }).blocks);
    expect(card).not.toContain('\u202E');
  });
});
