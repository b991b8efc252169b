import type { types } from '@slack/bolt';
import { afterAll, describe, expect, it } from 'vitest';
import { inputHash } from '../../../approvals/input-version.js';
import type { PendingStep } from '../../../approvals/pending-step.js';
import { CREATED_AT, evaluation, makeStep, REQUESTER } from '../../../approvals/pending-step.test-support.js';
import { buildApprovalCard } from '../../../slack/blocks/approval-card.js';
import { buildSchemaForm } from '../../../slack/modals/schema-form.js';
import { denyReasonView } from '../../../slack/views/deny-reason-view.js';
import { editCallView, formErrors } from '../../../slack/views/edit-call-view.js';
import { fullInputView } from '../../../slack/views/full-input-view.js';
import { grantView } from '../../../slack/views/grant-view.js';
import { replyView } from '../../../slack/views/reply-view.js';
import { expectInert } from './inert.test-support.js';
import { blockKit, newWindow, parse, WORKSPACE_CONTEXT } from './page-modules.test-support.js';
import { PROPOSED_INPUT, RICH_SCHEMA, SCHEMA_FORM_ELEMENT_TYPES } from './rich-schema.test-support.js';

const window = newWindow();
afterAll(() => window.happyDOM.close());

const context = { ...WORKSPACE_CONTEXT, users: { ...WORKSPACE_CONTEXT.users, [REQUESTER]: 'alice', U0CAROL: 'carol' } };
const at = CREATED_AT + 60_000;

/** The card as the page shows it, after checking nothing fell back to JSON and nothing is live. */
function shownCard(step: PendingStep) {
  const node = parse(window, blockKit.renderBlocks(buildApprovalCard({ step }).blocks, context));
  expect(node.querySelector('.bk-unknown')?.textContent ?? null).toBeNull();
  expectInert(node);
  return node;
}

function shownModal(view: unknown) {
  const node = parse(window, blockKit.renderModal(view, { viewId: 'V1' }, context));
  expect(node.querySelector('.bk-unknown')?.textContent ?? null).toBeNull();
  expectInert(node);
  return node;
}

const buttonLabels = (node: ReturnType<typeof parse>) => Array.from(node.querySelectorAll('button')).map((button) => button.textContent);

describe('approval cards built by the bot', () => {
  it('a pending call: header, who asked and when, the call with its arguments as code, and the buttons', () => {
    const node = shownCard(makeStep([{ approvalId: 'ap1', input: { service: 'worker', namespace: 'staging' } }], { expiresAt: CREATED_AT + 3_600_000 }));
    expect(node.querySelector('.bk-header-text')!.textContent).toBe('🔒 Approval needed');
    expect(node.querySelector('.bk-block-context')!.textContent).toMatch(/^Requested by @alice · Nov 14, 2023 at 10:13 PM · 1 call waiting · expires Nov 14, 2023 at 11:13 PM$/);
    expect(node.querySelector('.bk-block-section strong')!.textContent).toBe('restart_service');
    expect(JSON.parse(node.querySelector('.bk-block-section pre')!.textContent!)).toEqual({ service: 'worker', namespace: 'staging' });
    expect(buttonLabels(node)).toEqual(['Approve', 'Edit', 'Deny', 'Deny with reason', 'Approve & allow…']);
    expect(Array.from(node.querySelectorAll('button')).map((button) => button.className)).toEqual(['bk-btn bk-btn-primary', 'bk-btn', 'bk-btn bk-btn-danger', 'bk-btn', 'bk-btn']);
    expect(node.querySelector('hr.bk-rule')).not.toBeNull();
  });

  it('a two-person rule with one approval so far, and an edited version', () => {
    const policy = evaluation({ approvers: [{ kind: 'user', userId: 'U0BOB' }, { kind: 'user', userId: 'U0CAROL' }], required: 2 });
    const step = makeStep([{ approvalId: 'ap1', policy, input: { service: 'api', replicas: 3 } }]);
    const call = step.calls[0]!;
    const edited = { service: 'api', replicas: 5 };
    call.versions!.push({ number: 1, input: edited, inputHash: inputHash(edited), editedBy: 'U0BOB', at, policy });
    step.approvals = { ap1: [{ userId: 'U0BOB', at, version: 1, inputHash: inputHash(edited) }] };
    const text = shownCard(step).querySelector('.bk-block-section')!.textContent!;
    expect(text).toContain('Approvers: @bob or @carol · 2 approvals needed');
    expect(text).toContain('⏳ 1 of 2 approvals: @bob');
    expect(text).toContain('✏️ Version 2, edited by @bob');
  });

  it('decided calls show their outcome instead of buttons', () => {
    const step = makeStep(['ap1', 'ap2', 'ap3', 'ap4'], { phase: 'complete' });
    step.decisions = {
      ap1: { outcome: 'approved', userId: 'U0BOB', at, version: 0, inputHash: inputHash(step.calls[0]!.input), approvedBy: ['U0BOB'] },
      ap2: { outcome: 'denied', userId: 'U0BOB', at, reason: 'use <staging> first & *then* prod' },
      ap3: { outcome: 'expired', userId: 'U0BOB', at },
      ap4: { outcome: 'superseded', userId: 'U0BOB', at },
    };
    const node = shownCard(step);
    expect(node.querySelectorAll('button').length).toBe(0);
    const outcomes = Array.from(node.querySelectorAll('.bk-block-context')).slice(1).map((context) => context.textContent);
    expect(outcomes).toEqual([
      expect.stringMatching(/^✅ Approved by @bob · /),
      expect.stringMatching(/^❌ Denied by @bob · .* · Reason: use <staging> first & then prod$/),
      expect.stringMatching(/^⏰ Expired without a decision · /),
      expect.stringMatching(/^⏩ Not run: superseded by a newer message from @bob · /),
    ]);
    // The reason is the approver's own mrkdwn: Slack would show the bold too.
    expect(node.querySelectorAll('.bk-block-context')[2]!.querySelector('strong')!.textContent).toBe('then');
  });

  it('questions: option buttons, or a Reply button, and Decline', () => {
    expect(buttonLabels(shownCard(makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which region?', options: ['eu-west-1', 'us-east-1'] } }])))).toEqual(['eu-west-1', 'us-east-1', 'Decline']);
    const reply = shownCard(makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Why *now*?' } }]));
    expect(reply.querySelector('.bk-header-text')!.textContent).toBe('💬 Your input is needed');
    expect(buttonLabels(reply)).toEqual(['Reply', 'Decline']);
  });

  it('a huge input is cut with a note and a View full input button; more than ten calls are summarised', () => {
    const huge = shownCard(makeStep([{ approvalId: 'ap1', input: { script: 'x'.repeat(20_000) } }]));
    expect(huge.textContent).toMatch(/truncated, [\d,]+ more characters/);
    expect(buttonLabels(huge)).toContain('View full input');
    const many = shownCard(makeStep(Array.from({ length: 12 }, (_, index) => `ap${index}`)));
    expect(many.textContent).toContain('2 more calls not shown on this card (2 waiting)');
  });

  it('untrusted tool names, descriptions and arguments stay text', () => {
    const step = makeStep([{ approvalId: 'ap1', input: { cmd: '<script>alert(1)</script>', link: '<javascript:alert(1)|x>', ping: '<!channel>' } }]);
    step.calls[0]!.toolName = '<img src=x onerror=alert(1)>';
    step.calls[0]!.description = '*<@U0BOB>* `<b>`';
    const node = shownCard(step);
    expect(node.querySelector('.bk-block-section strong')!.textContent).toBe('<img src=x onerror=alert(1)>');
    expect(node.textContent).toContain('"cmd": "<script>alert(1)</script>"');
    expect(node.querySelector('.mk-broadcast')).toBeNull();
  });
});

describe('modals opened by the bot', () => {
  const step = makeStep([{ approvalId: 'ap1', input: PROPOSED_INPUT }]);
  const call = step.calls[0]!;

  it('the Edit modal of a schema with every field kind uses every element type, all rendered as controls', () => {
    const form = buildSchemaForm({ schema: RICH_SCHEMA, initialValue: PROPOSED_INPUT });
    const view = editCallView({ step, call, form, privateMetadata: '{}' });
    const inputs = view.blocks.filter((block) => block.type === 'input') as types.InputBlock[];
    expect([...new Set(inputs.map((block) => block.element.type))].sort()).toEqual(SCHEMA_FORM_ELEMENT_TYPES);
    const node = shownModal(view);
    expect(node.querySelector('.modal-title')!.textContent).toBe('Edit and approve');
    expect(node.querySelector('[data-modal-submit]')!.textContent).toBe('Approve & run');
    expect(node.querySelector('.modal-cancel')!.textContent).toBe('Cancel');
    expect(node.querySelector('.bk-header-text')!.textContent).toBe('Limits');
    expect(node.querySelector('.bk-block-context')!.textContent).toContain('Editing restart_service requested by @alice');
    for (const [index, block] of (view.blocks as types.InputBlock[]).entries()) {
      if (block.type !== 'input') continue;
      const control = node.querySelector(`[data-block-index="${index}"] [data-control]`)!;
      expect(control.getAttribute('data-control'), block.block_id).toBe(block.element.type);
      expect(node.querySelector(`[data-block-index="${index}"] label`)!.textContent).toBe(`${block.label.text}${block.optional ? ' (optional)' : ''}`);
    }
  });

  it('Deny with reason, Approve and allow (both variants), Full input, Reply, and the "Not changed" update', () => {
    expect(shownModal(denyReasonView({ call, privateMetadata: '{}' })).querySelector('textarea')!.getAttribute('placeholder')).toBe('e.g. wrong namespace; use staging first');
    const grant = shownModal(grantView({ step: { channel: 'C0OPS' }, call, privateMetadata: '{}' }));
    expect(grant.querySelectorAll('input[type="radio"]').length).toBe(2);
    expect(grant.querySelector('select')).not.toBeNull();
    expect(grant.querySelector('input[type="checkbox"]')).not.toBeNull();
    const identical = { ...call, policy: evaluation({ grants: 'identicalArguments' }) };
    expect(shownModal(grantView({ step: { channel: 'C0OPS' }, call: identical, privateMetadata: '{}' })).textContent).toContain('only for calls with identical arguments');
    const full = shownModal(fullInputView({ call: { ...call, input: { script: 'y'.repeat(9_000) } } }));
    expect(full.querySelectorAll('pre').length).toBeGreaterThan(1);
    expect(full.querySelector('[data-modal-submit]')).toBeNull();
    expect(full.querySelector('.modal-cancel')!.textContent).toBe('Close');
    const question = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which *region*?' } }]).calls[0]!;
    const reply = shownModal(replyView({ call: question, form: buildSchemaForm({ schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } }), privateMetadata: '{}' }));
    expect(reply.querySelector('.bk-block-section strong')!.textContent).toBe('region');
    const notChanged = formErrors({ fields: [], message: 'Nothing to *change*' });
    expect(shownModal(notChanged.view).textContent).toContain('Nothing to change');
  });
});
