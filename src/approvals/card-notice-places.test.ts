import { describe, expect, it } from 'vitest';
import { noticePlaces } from './card-notice-places.js';
import { evaluation, makeStep } from './pending-step.test-support.js';

describe('where a notice about a card goes', () => {
  const prod = evaluation({ notify: { thread: false, channels: ['C0APPROVALS'], dmApprovers: false } });
  const staging = evaluation({ approvers: [{ kind: 'user', userId: 'U0DBA' }], notify: { thread: false, channels: [], dmApprovers: true } });
  const step = {
    ...makeStep([{ approvalId: 'a', policy: prod }, { approvalId: 'b', policy: staging }], { cardTs: '1.5' }),
    copies: [
      { kind: 'channel' as const, channel: 'C0APPROVALS', ts: '2.2' },
      { kind: 'dm' as const, channel: 'D0DBA', ts: '3.3', userId: 'U0DBA' },
    ],
  };
  const [a, b] = step.calls;

  it('goes to the thread and under each copy that carries one of its calls, a DM only for someone it is for', () => {
    // Each with the step's message there, which a notice posted there is newer than: the card, the copy.
    const thread = { channel: step.channel, threadTs: step.threadTs, stepMessageTs: '1.5' };
    const approvals = { channel: 'C0APPROVALS', threadTs: '2.2', stepMessageTs: '2.2' };
    expect(noticePlaces(step, { calls: [a!] })).toEqual([thread, approvals]);
    expect(noticePlaces(step, { calls: [b!] })).toEqual([thread]);
    expect(noticePlaces(step, { calls: [a!, b!], inDm: (userId) => userId === 'U0DBA' })).toEqual([thread, approvals, { channel: 'D0DBA', threadTs: '3.3', stepMessageTs: '3.3' }]);
    expect(noticePlaces(step, { calls: [b!], inDm: () => false })).toEqual([thread]);
  });
});
