import { describe, expect, it } from 'vitest';
import { CHANNEL, CREATED_AT, evaluation, makeStep } from './pending-step.test-support.js';
import { requestsWaitingIn } from './requests-waiting-in.js';

const APPROVALS = 'C0APPROVALS';
const toApprovals = evaluation({ notify: { thread: true, channels: [APPROVALS], dmApprovers: false } });
const toSecurity = evaluation({ rule: { index: 1 }, notify: { thread: true, channels: ['C0SECURITY'], dmApprovers: false } });
const copyHere = { kind: 'channel' as const, channel: APPROVALS, ts: '1700000100.000001' };

describe('the requests waiting in a channel', () => {
  it('lists a request with a copy here, naming only the calls the copy carries, beside those whose thread is here, newest first', () => {
    const local = makeStep(['a1'], { channel: APPROVALS, createdAt: CREATED_AT + 1 });
    const copied = makeStep(
      [
        { approvalId: 'prod', policy: toApprovals },
        { approvalId: 'secrets', policy: toSecurity },
      ],
      { createdAt: CREATED_AT + 2, copies: [copyHere, { kind: 'channel', channel: 'C0SECURITY', ts: '1700000100.000002' }] },
    );
    const waiting = requestsWaitingIn({ channel: APPROVALS, inThread: [local], open: [local, copied] });
    expect(waiting.map(({ step, calls, copy }) => [step.stepId, calls.map((call) => call.approvalId), copy?.channel])).toEqual([
      [copied.stepId, ['prod'], APPROVALS],
      [local.stepId, ['a1'], undefined],
    ]);
  });

  it('leaves out a request whose copy here carries no call still waiting, and one with no copy here', () => {
    const decidedHere = makeStep(
      [
        { approvalId: 'prod', policy: toApprovals },
        { approvalId: 'secrets', policy: toSecurity },
      ],
      { copies: [copyHere], decisions: { prod: { outcome: 'approved', userId: 'U0OPS', at: CREATED_AT } } },
    );
    const elsewhere = makeStep([{ approvalId: 'secrets', policy: toSecurity }], { copies: [{ kind: 'channel', channel: 'C0SECURITY', ts: '1700000100.000003' }] });
    expect(requestsWaitingIn({ channel: APPROVALS, inThread: [], open: [decidedHere, elsewhere] })).toEqual([]);
    // In the thread's own channel it is listed as before, by its thread.
    expect(requestsWaitingIn({ channel: CHANNEL, inThread: [decidedHere], open: [decidedHere] }).map(({ copy }) => copy)).toEqual([undefined]);
  });
});
