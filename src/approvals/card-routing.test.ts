import { describe, expect, it } from 'vitest';
import { fromThisCard, stepRouting, threadCardActionable } from './card-routing.js';
import { evaluation, makeStep } from './pending-step.test-support.js';

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
