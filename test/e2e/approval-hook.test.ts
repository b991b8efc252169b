import { describe, expect, it } from 'vitest';
import type { ApprovalHookRequest } from '../../src/index.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

const repliesText = (h: Harness, threadTs: string) => threadReplies(h, threadTs).map((message) => message.text);
const cardOf = (h: Harness, threadTs: string) => threadReplies(h, threadTs).find((message) => JSON.stringify(message.blocks ?? []).includes('restart_service'));

describe('onApprovalRequest: a call decided in code', () => {
  it('approves: the tool runs once without a click, the card and the audit trail name the hook', async () => {
    const requests: ApprovalHookRequest[] = [];
    const h = await harness({
      onApprovalRequest: {
        name: 'staging-is-fine',
        decide: (request) => {
          requests.push(request);
          // The hook gets a copy: changing it must not change what runs.
          (request.input as { namespace: string }).namespace = 'prod';
          return { decision: 'approve' };
        },
      },
    });
    h.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted worker in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });

    await waitFor(() => repliesText(h, threadTs).some((text) => text.includes('Restarted worker in staging.')), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ toolName: 'restart_service', requesterId: 'UALICE', channel: CHANNEL, threadTs, rule: undefined });
    const card = cardOf(h, threadTs)!;
    expect(JSON.stringify(card.blocks)).toContain('Approved by policy hook `staging-is-fine`');
    expect(cardButtons(card.blocks)).toEqual([]);
    const toolMessage = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool');
    expect(toolMessage?.text).toContain('ok: rollout restart deployment/worker -n staging');

    const audit = await h.auditEvents();
    expect(audit.map((event) => event.type)).toEqual(['approval-requested', 'decision', 'tool-started', 'tool-executed']);
    expect(audit[1]).toMatchObject({ outcome: 'approved', userId: 'hook:staging-is-fine', approvedBy: ['hook:staging-is-fine'], version: 0 });
    expect(audit[2]).toMatchObject({ basis: { kind: 'approval', approvedBy: ['hook:staging-is-fine'] }, input: { namespace: 'staging' } });
  });

  it('settles a call by itself, even under a two-person rule that names its approvers', async () => {
    const h = await harness({
      onApprovalRequest: { name: 'runbook', decide: (request) => (request.policy.required === 2 ? { decision: 'approve' } : undefined) },
      extraYaml: 'policy:\n  rules:\n    - tools: [restart_service]\n      approvers: [U0OPS1, U0OPS2]\n      required: 2\n',
    });
    h.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted per the runbook.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    await waitFor(() => repliesText(h, threadTs).some((text) => text.includes('Restarted per the runbook.')), { message: 'the answer' });
    expect(h.invocations()).toHaveLength(1);
    expect(JSON.stringify(cardOf(h, threadTs)!.blocks)).toContain('Approved by policy hook `runbook`');
  });

  it('decides the calls it knows and leaves the others on the card: each approved call runs once after the last decision', async () => {
    const h = await harness({
      onApprovalRequest: { name: 'staging-only', decide: ({ input }) => ((input as { namespace: string }).namespace === 'staging' ? { decision: 'approve' } : undefined) },
    });
    const prod = { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } };
    h.openai.enqueue({ toolCalls: [restart, prod] }, { text: 'Restarted both.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging and the api in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'a card with buttons' });
    expect(JSON.stringify(card.blocks)).toContain('Approved by policy hook `staging-only`');
    await h.settled();
    expect(h.invocations()).toEqual([]);

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => repliesText(h, threadTs).some((text) => text.includes('Restarted both.')), { message: 'the answer' });
    await h.settled();
    // Both run in the resumed step, concurrently: in either order, each once.
    expect(h.invocations()).toHaveLength(2);
    expect(h.invocations()).toEqual(
      expect.arrayContaining([
        ['rollout', 'restart', 'deployment/worker', '-n', 'staging'],
        ['rollout', 'restart', 'deployment/api', '-n', 'prod'],
      ]),
    );
    const decisions = (await h.auditEvents()).filter((event) => event.type === 'decision');
    expect(decisions.map((event) => event.userId)).toEqual(['hook:staging-only', 'UBOB']);
  });

  it('denies: nothing runs and the model is told the reason', async () => {
    const h = await harness({ onApprovalRequest: async function changeFreeze() { return { decision: 'deny', reason: 'change freeze until Monday' }; } });
    h.openai.enqueue({ toolCalls: [restart] }, { text: 'There is a change freeze, so I did not restart it.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });

    await waitFor(() => repliesText(h, threadTs).some((text) => text.includes('change freeze, so I did not')), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
    const toolMessage = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool');
    expect(toolMessage?.text).toContain('Declined by the policy hook changeFreeze: change freeze until Monday');
    expect(JSON.stringify(cardOf(h, threadTs)!.blocks)).toContain('Denied by policy hook `changeFreeze`');
    const decision = (await h.auditEvents()).find((event) => event.type === 'decision');
    expect(decision).toMatchObject({ outcome: 'denied', userId: 'hook:changeFreeze', reason: 'change freeze until Monday' });
  });

  it.each([
    ['throws', { name: 'broken', decide: () => { throw new Error('policy service down'); } }],
    ['never answers in time', { name: 'slow', timeoutMs: 50, decide: () => new Promise<undefined>(() => {}) }],
    [
      'has no opinion (and scribbles on its copy of the input)',
      {
        name: 'undecided',
        decide: ({ input }: ApprovalHookRequest) => {
          (input as { service: string }).service = 'everything';
          return undefined;
        },
      },
    ],
  ])('leaves the call to people when the hook %s', async (_case, hook) => {
    const h = await harness({ onApprovalRequest: hook });
    h.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted after Bob approved.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'a card with buttons' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect((await h.auditEvents()).map((event) => event.type)).toEqual(['approval-requested']);
    expect(JSON.stringify(card.blocks)).not.toContain('everything');

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => repliesText(h, threadTs).some((text) => text.includes('Restarted after Bob approved.')), { message: 'the answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
  });

  it('cannot approve a call whose rule forbids automatic approval; it may still be approved by a person', async () => {
    const h = await harness({
      onApprovalRequest: { name: 'approve-everything', decide: () => ({ decision: 'approve' }) },
      extraYaml: 'policy:\n  rules:\n    - tools: [restart_service]\n      autoApprove: forbidden\n',
    });
    h.openai.enqueue({ toolCalls: [restart] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'a card with buttons' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
    const audit = await h.auditEvents();
    expect(audit.find((event) => event.type === 'action-refused')).toMatchObject({ userId: 'hook:approve-everything', code: 'auto-approve-forbidden' });
    expect(audit.some((event) => event.type === 'decision')).toBe(false);
  });
});
