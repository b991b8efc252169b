import { describe, expect, it } from 'vitest';
import type { PendingStep } from './pending-step.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { wrongCardText } from './wrong-card-text.js';

const APPROVALS = 'C0APPROVALS';
const THREAD_LINK = 'https://example.slack.com/archives/C0THREAD/p1700000000000200';

/** A step routed to #approvals and to U0LEAD's DM, its thread card linked, with `copies` on record. */
function routed(copies: PendingStep['copies'] = []): PendingStep {
  const policy = evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { thread: true, channels: [APPROVALS], dmApprovers: true } });
  return { ...makeStep([{ approvalId: 'apv-1', policy }]), cardTs: '1700000000.000200', cardLink: THREAD_LINK, copies };
}

describe('what a click from a card the step does not record is told', () => {
  it('from an unrecorded copy where the step sends its card: that it is out of date, and where the request is', () => {
    const step = routed();
    const thread = `This copy of the request is out of date, so nothing changed: use its card in <#${step.channel}> (<${THREAD_LINK}|open the thread>).`;
    expect(wrongCardText(step, { channel: APPROVALS, userId: 'U0BOB' })).toBe(thread);
    expect(wrongCardText(step, { channel: 'D0LEAD', userId: 'U0LEAD' })).toBe(thread);
  });

  it('from a second copy in a channel whose copy is on record: sent to that one', () => {
    const step = routed([{ kind: 'channel', channel: APPROVALS, ts: '1700000000.000300', permalink: 'https://example.slack.com/archives/C0APPROVALS/p1700000000000300' }]);
    expect(wrongCardText(step, { channel: APPROVALS, userId: 'U0BOB' })).toBe('This copy of the request is out of date, so nothing changed: use the current one here (<https://example.slack.com/archives/C0APPROVALS/p1700000000000300|open>).');
  });

  it("when the thread's card has no buttons: sent to the channel copy on record, where the rule decides", () => {
    const policy = evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { thread: false, channels: [APPROVALS], dmApprovers: true } });
    const copyLink = 'https://example.slack.com/archives/C0APPROVALS/p1700000000000300';
    const step: PendingStep = { ...makeStep([{ approvalId: 'apv-1', policy }]), cardTs: '1700000000.000200', cardLink: THREAD_LINK, copies: [{ kind: 'channel', channel: APPROVALS, ts: '1700000000.000300', permalink: copyLink }] };
    expect(wrongCardText(step, { channel: 'D0LEAD', userId: 'U0LEAD' })).toBe(`This copy of the request is out of date, so nothing changed: use its card in <#${APPROVALS}> (<${copyLink}|open>).`);
  });

  it('from anywhere else: that the request belongs to another channel', () => {
    expect(wrongCardText(routed(), { channel: 'C0ELSEWHERE', userId: 'U0BOB' })).toBe('This request belongs to another channel, so nothing changed.');
    expect(wrongCardText(routed(), { channel: undefined, userId: 'U0LEAD' })).toBe('This request belongs to another channel, so nothing changed.');
  });

  it('drops a link that could break out of the link syntax', () => {
    const step = { ...routed(), cardLink: 'https://example.slack.com/x|<!channel>' };
    expect(wrongCardText(step, { channel: APPROVALS, userId: 'U0BOB' })).toBe(`This copy of the request is out of date, so nothing changed: use its card in <#${step.channel}>.`);
  });
});
