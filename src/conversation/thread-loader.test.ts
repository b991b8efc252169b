import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { validatedThread } from './thread-loader.js';

const address = { teamId: 'T1', channel: 'C1', threadTs: '1700000000.000300' };
const logger = pino({ level: 'silent' });
const waiting: ThreadState = {
  ...newThreadState(address, 1),
  messages: [
    { role: 'user', content: 'restart the worker' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'restart_service', input: {} }, { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'call_1' }] },
  ],
  pendingStepId: 'step-1',
  failedTurn: { id: 'f1', requesterId: 'UALICE', at: 1 },
  instigatorIds: ['UBOB'],
  participants: ['UALICE'],
};

describe('validatedThread', () => {
  it('keeps a valid history with the step and failure that refer to it', () => {
    expect(validatedThread({ address, stored: waiting, logger, now: () => 2 })).toEqual(waiting);
  });

  it('drops with a history that fails validation the step, the failure and the answerers that refer to its calls', () => {
    const tampered = { ...waiting, messages: [{ role: 'user', content: [{ type: 'hologram' }] }] } as unknown as ThreadState;
    const { pendingStepId: _step, failedTurn: _failed, instigatorIds: _instigators, ...rest } = waiting;
    // Kept, the step's resume or closing would answer calls no longer in the history, and the model APIs refuse that.
    // The ids of its calls are gone with it: new calls get fresh ones.
    expect(validatedThread({ address, stored: tampered, logger, now: () => 2 })).toEqual({ ...rest, messages: [], callIdsForgotten: true });
  });
});
