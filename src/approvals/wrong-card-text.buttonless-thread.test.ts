import { describe, expect, it } from 'vitest';
import { threadCardActionable } from './card-routing.js';
import type { PendingStep } from './pending-step.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { wrongCardText } from './wrong-card-text.js';

const APPROVALS = 'C0APPROVALS';
const APPROVALS_COPY = 'https://example.slack.com/archives/C0APPROVALS/p1700000000000300';
const THREAD_LINK = 'https://example.slack.com/archives/C0OPS/p1700000000000200';

/**
 * A rule that keeps its buttons off the thread (notify.thread: false) and sends them to #approvals and
 * the approvers' DMs. The #approvals copy is on record, U0OPS2's DM copy is not (its record failed and
 * Slack would not remove it, or the process stopped between the post and the record). The thread's card
 * then has no buttons: #approvals decides. 7b3f73a tells U0OPS2, clicking the stale DM copy, to "use its
 * card in <#C0OPS> (open the thread)": a card with no buttons; the place the request can be decided
 * (the #approvals copy on record) is not named.
 */
describe('a click on an unrecorded DM copy when the thread card has no buttons', () => {
  it('is sent to a card that can decide the request', () => {
    const policy = evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS1' }, { kind: 'user', userId: 'U0OPS2' }], notify: { thread: false, channels: [APPROVALS], dmApprovers: true } });
    const copies: PendingStep['copies'] = [
      { kind: 'channel', channel: APPROVALS, ts: '1700000000.000300', permalink: APPROVALS_COPY },
      { kind: 'dm', channel: 'D0OPS1', userId: 'U0OPS1', ts: '1700000000.000400' },
    ];
    const step: PendingStep = { ...makeStep([{ approvalId: 'apv-1', policy }]), cardTs: '1700000000.000200', cardLink: THREAD_LINK, copies };
    expect(threadCardActionable(step)).toBe(false);
    const told = wrongCardText(step, { channel: 'D0OPS2', userId: 'U0OPS2' });
    expect(told, 'sent to the thread card, which has no buttons').toMatch(new RegExp(`${APPROVALS}`));
  });
});
