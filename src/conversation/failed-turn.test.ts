import { describe, expect, it } from 'vitest';
import { judgeRetry } from './failed-turn.js';
import { scheduleActor } from './schedule-actor.js';

const failure = (requesterId: string) => ({ id: 'f1', requesterId, at: 1 });

describe('judgeRetry', () => {
  it('lets only the person who asked retry their turn, which stays theirs', () => {
    expect(judgeRetry(failure('UALICE'), { clickedBy: 'UALICE', failureId: 'f1' })).toEqual({ allowed: true, requesterId: 'UALICE' });
    expect(judgeRetry(failure('UALICE'), { clickedBy: 'UBOB', failureId: 'f1' })).toMatchObject({ allowed: false, code: 'not-requester', message: expect.stringContaining('Only <@UALICE>') });
  });

  it("lets anyone retry a scheduled turn, which still runs as the schedule (so the schedule's autoApprove applies)", () => {
    const judgement = judgeRetry(failure(scheduleActor('heartbeat')), { clickedBy: 'UBOB', failureId: 'f1' });
    expect(judgement).toEqual({ allowed: true, requesterId: 'schedule:heartbeat' });
  });

  it('refuses a failure the thread no longer has', () => {
    expect(judgeRetry(undefined, { clickedBy: 'UALICE' })).toMatchObject({ allowed: false, code: 'nothing-to-retry' });
    expect(judgeRetry(failure(scheduleActor('heartbeat')), { clickedBy: 'UBOB', failureId: 'f0' })).toMatchObject({ allowed: false, code: 'nothing-to-retry' });
  });
});
