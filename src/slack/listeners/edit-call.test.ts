import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import type { ToolSchemas } from '../../tools/tool-schemas.js';
import { EDIT_CALL_CALLBACK_ID } from '../views/edit-call-view.js';
import { failingStore, fakeBoltApp, formSubmit, recordingMessenger } from './bolt-listener.test-support.js';
import { registerEditCall } from './edit-call.js';
import { UNREADABLE_CALL_TEXT } from './read-call.js';

describe('submitting the Edit form while Redis cannot be read', () => {
  it('shows the failure in the form, which keeps its values, and records nothing', async () => {
    const { app, view } = fakeBoltApp();
    const decider = { record: vi.fn(), publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
    const toolSchemas = { jsonSchema: vi.fn(), validate: vi.fn() } as unknown as ToolSchemas;
    registerEditCall(app, { store: failingStore(), channelsOf: async () => undefined, decider, messenger: recordingMessenger().messenger, toolSchemas, logger: pino({ level: 'silent' }), audit: createMemoryAuditLog({ logger: pino({ level: 'silent' }) }) });
    const { args, ack } = formSubmit({ reference: { stepId: 'step01', approvalId: 'apv1', version: 0 }, blocks: [{ type: 'context' }, { type: 'input', block_id: 'namespace' }] });
    await view(EDIT_CALL_CALLBACK_ID)(args);
    expect(ack).toHaveBeenCalledExactlyOnceWith({ response_action: 'errors', errors: { namespace: UNREADABLE_CALL_TEXT } });
    expect(decider.record).not.toHaveBeenCalled();
  });
});
