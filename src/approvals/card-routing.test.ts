import { describe, expect, it } from 'vitest';
import { copyCarriesCall, fromThisCard, stepRouting, threadCallActionable, threadCardActionable } from './card-routing.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { escalateTransition } from './transitions/escalate.js';

const named = [{ kind: 'user' as const, userId: 'U0OPS1' }, { kind: 'user' as const, userId: 'UALICE' }, { kind: 'group' as const, groupId: 'S0ONCALL' }];

describe('card routing', () => {
  it('goes everywhere any call asks, never twice to the thread channel, and DMs only named users who may approve', () => {
    const step = makeStep([
      { approvalId: 'a', policy: evaluation({ approvers: named, notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: true } }) },
      { approvalId: 'b', policy: evaluation({ notify: { thread: false, channels: ['C0APPROVALS', 'C0OTHER'], dmApprovers: false } }) },
    ]);
    const routing = stepRouting({ ...step, requesterId: 'UALICE', calls: step.calls.map((call) => ({ ...call })) });
    expect(routing).toEqual({ thread: false, channels: ['C0APPROVALS', 'C0OTHER'], dmUserIds: ['U0OPS1'] });
    expect(stepRouting({ ...step, channel: 'C0APPROVALS' }).channels).toEqual(['C0OTHER']);
  });

  it('keeps the buttons in the thread until a copy exists elsewhere', () => {
    const step = makeStep([{ approvalId: 'a', policy: evaluation({ notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: false } }) }]);
    expect(threadCardActionable(step)).toBe(true);
    expect(threadCardActionable({ ...step, copies: [{ kind: 'channel', channel: 'C0APPROVALS', ts: '2.2' }] })).toBe(false);
    expect(threadCardActionable(makeStep(['a']))).toBe(true);
  });

  it('keeps the buttons in the thread while a channel the rule names has no copy, even when a DM copy was posted', () => {
    const approvers = [{ kind: 'user' as const, userId: 'U0LEAD' }, { kind: 'group' as const, groupId: 'S0SRE' }];
    const step = makeStep([{ approvalId: 'a', policy: evaluation({ approvers, notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: true } }) }]);
    const dm = { kind: 'dm' as const, channel: 'D0LEAD', ts: '3.3', userId: 'U0LEAD' };
    expect(threadCardActionable({ ...step, copies: [dm] })).toBe(true);
    expect(threadCardActionable({ ...step, copies: [dm, { kind: 'channel', channel: 'C0APPROVALS', ts: '2.2' }] })).toBe(false);
  });

  it('keeps the buttons in the thread for a group that only DMs would reach (a step stored under an older config)', () => {
    const approvers = [{ kind: 'user' as const, userId: 'U0LEAD' }, { kind: 'group' as const, groupId: 'S0SRE' }];
    const step = makeStep([{ approvalId: 'a', policy: evaluation({ approvers, notify: { thread: false, channels: [], dmApprovers: true } }) }]);
    expect(threadCardActionable({ ...step, copies: [{ kind: 'dm', channel: 'D0LEAD', ts: '3.3', userId: 'U0LEAD' }] })).toBe(true);
  });

  it('hands the buttons to DM copies only when every approver of a waiting call has one; the requester needs none', () => {
    const approvers = [{ kind: 'user' as const, userId: 'U0OPS1' }, { kind: 'user' as const, userId: 'U0OPS2' }, { kind: 'user' as const, userId: 'U0ALICE' }];
    const notify = { thread: false, channels: [], dmApprovers: true };
    const step = makeStep([{ approvalId: 'a', policy: evaluation({ approvers, notify }) }, { approvalId: 'b', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS3' }], notify }) }]);
    const dm = (userId: string) => ({ kind: 'dm' as const, channel: `D${userId}`, ts: '3.3', userId });
    expect(threadCardActionable({ ...step, copies: [dm('U0OPS1'), dm('U0OPS2')] })).toBe(true);
    expect(threadCardActionable({ ...step, copies: [dm('U0OPS1'), dm('U0OPS2'), dm('U0OPS3')] })).toBe(false);
    // The call U0OPS3 was to decide is decided: nobody waits for him.
    expect(threadCardActionable({ ...step, copies: [dm('U0OPS1'), dm('U0OPS2')], decisions: { b: { outcome: 'approved', userId: 'U0OPS3', at: 1 } } })).toBe(false);
  });

  it('gives the buttons back to the thread when an escalation hop adds a group that no copy reaches', () => {
    const ladder = [{ afterMs: 100, remind: false, addApprovers: [{ kind: 'group' as const, groupId: 'S0LEADS' }] }];
    const policy = evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS1' }], notify: { thread: false, channels: [], dmApprovers: true }, escalation: ladder });
    const step = makeStep([{ approvalId: 'a', policy }]);
    step.escalation = { ladder, rule: { index: 0 }, done: 0, nextAt: step.createdAt + 100 };
    step.expiresAt = step.createdAt + 1_000;
    step.copies = [{ kind: 'dm', channel: 'D0OPS1', ts: '3.3', userId: 'U0OPS1' }];
    expect(threadCardActionable(step)).toBe(false);
    const escalated = escalateTransition(step, { now: step.createdAt + 100 })!.transition.step;
    expect(threadCardActionable(escalated)).toBe(true);
  });

  it("judges each call by its own rule's copies: another rule's approval channel reaches none of its approvers", () => {
    const prod = evaluation({ approvers: [{ kind: 'group', groupId: 'S0OPS' }], notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: false } });
    const staging = evaluation({ approvers: [{ kind: 'user', userId: 'U0DBA' }], notify: { thread: false, channels: [], dmApprovers: true } });
    const step = makeStep([{ approvalId: 'a', policy: prod }, { approvalId: 'b', policy: staging }]);
    step.copies = [{ kind: 'channel', channel: 'C0APPROVALS', ts: '2.2' }];
    const [a, b] = step.calls;
    expect(threadCallActionable(step, a!)).toBe(false);
    // The DM to U0DBA failed: #approvals is prod's channel, not a place U0DBA was sent to.
    expect(threadCallActionable(step, b!)).toBe(true);
    expect(threadCardActionable(step)).toBe(true);
    step.copies.push({ kind: 'dm', channel: 'D0DBA', ts: '3.3', userId: 'U0DBA' });
    expect(threadCallActionable(step, b!)).toBe(false);
    expect(threadCardActionable(step)).toBe(false);
  });

  it('keeps in the thread the buttons of a call whose rule wants them there, and hands over those of a call whose rule does not', () => {
    const routed = evaluation({ notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: false } });
    const step = makeStep([{ approvalId: 'a', policy: routed }, 'b']);
    step.copies = [{ kind: 'channel', channel: 'C0APPROVALS', ts: '2.2' }];
    expect(threadCallActionable(step, step.calls[0]!)).toBe(false);
    expect(threadCallActionable(step, step.calls[1]!)).toBe(true);
  });

  it("puts on a copy only the calls its rule sends there; a DM copy recorded without its owner carries them all", () => {
    const prod = evaluation({ notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: false } });
    const staging = evaluation({ approvers: [{ kind: 'user', userId: 'U0DBA' }], notify: { thread: false, channels: [], dmApprovers: true } });
    const step = makeStep([{ approvalId: 'a', policy: prod }, { approvalId: 'b', policy: staging }]);
    const [a, b] = step.calls;
    expect([a, b].map((call) => copyCarriesCall(step, call!, { kind: 'channel', channel: 'C0APPROVALS' }))).toEqual([true, false]);
    expect([a, b].map((call) => copyCarriesCall(step, call!, { kind: 'dm', userId: 'U0DBA' }))).toEqual([false, true]);
    expect([a, b].map((call) => copyCarriesCall(step, call!, { kind: 'dm' }))).toEqual([true, true]);
  });

  it('accepts a click from the thread channel or a recorded copy, and from no other message or channel', () => {
    const step = { ...makeStep(['a']), copies: [{ kind: 'channel' as const, channel: 'C0APPROVALS', ts: '2.2' }] };
    expect(fromThisCard(step, { channel: step.channel })).toBe(true);
    expect(fromThisCard(step, { channel: 'C0APPROVALS', messageTs: '2.2' })).toBe(true);
    expect(fromThisCard(step, { channel: 'C0APPROVALS' })).toBe(true);
    expect(fromThisCard(step, { channel: 'C0APPROVALS', messageTs: '9.9' })).toBe(false);
    expect(fromThisCard(step, { channel: 'C0ELSEWHERE', messageTs: '2.2' })).toBe(false);
    expect(fromThisCard(step, { channel: undefined })).toBe(false);
  });
});
