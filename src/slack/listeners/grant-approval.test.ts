import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import { GRANT_CALLBACK_ID } from '../views/grant-view.js';
import { failingStore, fakeBoltApp, formSubmit, recordingMessenger } from './bolt-listener.test-support.js';
import { registerGrantApproval } from './grant-approval.js';
import { UNREADABLE_CALL_TEXT } from './read-call.js';

describe('submitting "Approve & allow" while Redis cannot be read', () => {
  it('shows the failure in the form, which keeps the choices, and records nothing', async () => {
    const { app, view } = fakeBoltApp();
    const decider = { record: vi.fn(), publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
    registerGrantApproval(app, { store: failingStore(), channelsOf: async () => undefined, decider, messenger: recordingMessenger().messenger, logger: pino({ level: 'silent' }), audit: createMemoryAuditLog({ logger: pino({ level: 'silent' }) }) });
    const { args, ack } = formSubmit({ reference: { stepId: 'step01', approvalId: 'apv1', version: 0 }, blocks: [{ type: 'input', block_id: 'scope' }] });
    await view(GRANT_CALLBACK_ID)(args);
    expect(ack).toHaveBeenCalledExactlyOnceWith({ response_action: 'errors', errors: { scope: UNREADABLE_CALL_TEXT } });
    expect(decider.record).not.toHaveBeenCalled();
  });
});
