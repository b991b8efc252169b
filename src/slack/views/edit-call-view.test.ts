import { describe, expect, it } from 'vitest';
import { evaluation, makeStep } from '../../approvals/pending-step.test-support.js';
import { buildSchemaForm } from '../modals/schema-form.js';
import { editCallView } from './edit-call-view.js';

const schema = { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] } as const;

function viewFor(required: number) {
  const step = makeStep([{ approvalId: 'ap1', input: { service: 'api' }, policy: evaluation({ required }) }]);
  const form = buildSchemaForm({ schema, initialValue: { service: 'api' } });
  const view = editCallView({ step, call: step.calls[0]!, form, privateMetadata: '{}' });
  return { intro: JSON.stringify(view.blocks[0]), submit: view.submit?.text };
}

describe('the edit form says what submitting does', () => {
  it('under a one-approver rule: approves and runs', () => {
    const { intro, submit } = viewFor(1);
    expect(intro).toContain('Submitting approves the call with these values');
    expect(submit).toBe('Approve & run');
  });

  it('under a quorum: a new version that needs its own approvals, earlier ones stop counting', () => {
    const { intro, submit } = viewFor(2);
    expect(intro).toContain('makes these values version 2');
    expect(intro).toContain('earlier approvals stop counting');
    expect(intro).toContain('once 2 people have approved version 2');
    expect(submit).toBe('Submit & approve');
  });
});
