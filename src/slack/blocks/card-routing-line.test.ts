import { describe, expect, it } from 'vitest';
import { evaluation, makeStep } from '../../approvals/pending-step.test-support.js';
import { buildApprovalCard } from './approval-card.js';
import { cardRoutingLine } from './card-routing-line.js';

const copies = [
  { kind: 'channel' as const, channel: 'C0APPROVALS', ts: '2.2', permalink: 'https://example.slack.com/archives/C0APPROVALS/p22' },
  { kind: 'dm' as const, channel: 'D0OPS1', ts: '3.3', userId: 'U0OPS1' },
  { kind: 'dm' as const, channel: 'D0OPS2', ts: '4.4', userId: 'U0OPS2' },
];

/** The policy the copies above were posted for. */
const routed = evaluation({
  approvers: [{ kind: 'user', userId: 'U0OPS1' }, { kind: 'user', userId: 'U0OPS2' }],
  notify: { thread: true, channels: ['C0APPROVALS'], dmApprovers: true },
});

describe('card routing line', () => {
  it('tells the thread where else the card waits, and each copy which thread it belongs to', () => {
    const step = { ...makeStep([{ approvalId: 'a', policy: routed }]), copies, cardLink: 'https://example.slack.com/archives/C0OPS/p11' };
    expect(cardRoutingLine({ step, placement: 'thread', actionable: true })).toBe(
      ':mailbox_with_mail: Also waiting for approval in <#C0APPROVALS> (<https://example.slack.com/archives/C0APPROVALS/p22|open>) and a DM to <@U0OPS1>, <@U0OPS2>',
    );
    expect(cardRoutingLine({ step, placement: 'thread', actionable: false })).toMatch(/^:mailbox_with_mail: Waiting for approval in/);
    expect(cardRoutingLine({ step, placement: 'copy', actionable: true })).toBe(`:link: Requested in <#${step.channel}> · <https://example.slack.com/archives/C0OPS/p11|open the thread>`);
    expect(cardRoutingLine({ step: makeStep(['a']), placement: 'thread', actionable: true })).toBe('');
  });

  it('names only the copies the routing still asks for: after an edit under another rule, a DM whose owner may no longer approve is no place to decide', () => {
    const edited = evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: false } });
    const step = { ...makeStep([{ approvalId: 'a', policy: edited }]), copies };
    expect(cardRoutingLine({ step, placement: 'thread', actionable: false })).toBe(':mailbox_with_mail: Waiting for approval in <#C0APPROVALS> (<https://example.slack.com/archives/C0APPROVALS/p22|open>)');
  });

  it('drops a link that could break out of the link syntax', () => {
    const step = { ...makeStep(['a']), cardLink: 'https://evil.example/|<!channel>' };
    expect(cardRoutingLine({ step, placement: 'copy', actionable: true })).toBe(`:link: Requested in <#${step.channel}>`);
  });

  const ladder = [{ afterMs: 60_000, remind: true, addApprovers: [] }, { afterMs: 120_000, remind: false, addApprovers: [{ kind: 'group' as const, groupId: 'S0LEADS' }] }];

  it('shows the escalation stage and the next hop on the card while calls wait', () => {
    const step = makeStep([{ approvalId: 'a', policy: evaluation({ escalation: ladder }) }]);
    step.escalation = { ladder, rule: { index: 0 }, done: 1, nextAt: step.createdAt + 120_000 };
    expect(JSON.stringify(buildApprovalCard({ step }).blocks)).toContain('Stage 2 of 3 · next: escalates to <!subteam^S0LEADS> <!date^');
    const decided = { ...step, decisions: { a: { outcome: 'denied' as const, userId: 'UBOB', at: step.createdAt } }, phase: 'complete' as const };
    expect(JSON.stringify(buildApprovalCard({ step: decided }).blocks)).not.toContain('Stage 2 of 3');
  });

  it('drops the stage once every call under the ladder\'s rule is decided, while a call under another rule waits', () => {
    const step = makeStep([
      { approvalId: 'staging', policy: evaluation({ escalation: ladder }) },
      { approvalId: 'prod', input: { service: 'api', namespace: 'prod' }, policy: evaluation({ rule: { index: 1 } }) },
    ]);
    step.escalation = { ladder, rule: { index: 0 }, done: 1, nextAt: step.createdAt + 120_000 };
    step.decisions.staging = { outcome: 'denied', userId: 'UBOB', at: step.createdAt };
    const summary = JSON.stringify(buildApprovalCard({ step }).blocks);
    expect(summary).toContain('1 call waiting');
    expect(summary).not.toContain('Stage 2 of 3');
    expect(summary).not.toContain('escalates to');
  });
});

describe("a step whose calls two rules route to different places", () => {
  const prod = evaluation({ approvers: [{ kind: 'group', groupId: 'S0OPS' }], notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: false } });
  const staging = evaluation({ approvers: [{ kind: 'user', userId: 'U0DBA' }], notify: { thread: false, channels: [], dmApprovers: true } });
  const twoRules = () =>
    makeStep([
      { approvalId: 'a', policy: prod, input: { service: 'api', namespace: 'prod' } },
      { approvalId: 'b', policy: staging, input: { service: 'db-proxy', namespace: 'staging' } },
    ]);
  const text = (card: { blocks: unknown[] }) => JSON.stringify(card.blocks);

  it("shows a copy only the calls routed to it: another rule's input and buttons stay out of #approvals and the DM", () => {
    const step = twoRules();
    const channelCopy = buildApprovalCard({ step, placement: 'copy', copy: { kind: 'channel', channel: 'C0APPROVALS' } });
    expect(text(channelCopy)).toContain('api');
    expect(text(channelCopy)).not.toContain('db-proxy');
    expect(text(channelCopy)).toContain('1 more call of this request is not sent here');
    expect(channelCopy.blocks.filter((block) => block.type === 'actions')).toHaveLength(1);
    const dmCopy = buildApprovalCard({ step, placement: 'copy', copy: { kind: 'dm', userId: 'U0DBA' } });
    expect(text(dmCopy)).toContain('db-proxy');
    expect(dmCopy.blocks.filter((block) => block.type === 'section' && JSON.stringify(block).includes('restart_service'))).toHaveLength(1);
    expect(dmCopy.blocks.filter((block) => block.type === 'actions')).toHaveLength(1);
  });

  it("keeps in the thread the buttons of the call whose DM copy failed, not those of the call #approvals reached", () => {
    const step = { ...twoRules(), copies: [{ kind: 'channel' as const, channel: 'C0APPROVALS', ts: '2.2' }] };
    const card = buildApprovalCard({ step });
    expect(card.blocks.filter((block) => block.type === 'actions')).toHaveLength(1);
    expect(text(card)).toContain('Also waiting for approval in <#C0APPROVALS>');
  });
});
