import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import { DENY_REASON_BLOCK_ID, DENY_REASON_CALLBACK_ID } from '../views/deny-reason-view.js';
import { fakeBoltApp, formSubmit, recordingMessenger, storeWith } from './bolt-listener.test-support.js';
import { registerDenyWithReason } from './deny-with-reason.js';

/** What Bolt's HTTP receiver throws at an `ack` after it answered Slack's request itself (past 3 s). */
const headersSent = () => Object.assign(new Error('Cannot set headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });

/**
 * A form submit records its decision before it answers Slack (so a refusal shows in the form). When
 * the record took longer than Slack's 3 s, the late `ack` throws: the decision it recorded must be
 * published all the same, or the cards stay undrawn and the claimed resume unrun (a stop waiting for it).
 */
describe('a form submit whose ack comes too late', () => {
  for (const outcome of [
    { recorded: true, step: { threadTs: '1' } },
    { recorded: false, message: 'Already approved.' },
  ]) {
    it(`still publishes its ${outcome.recorded ? 'recorded decision' : 'refusal'}`, async () => {
      const step = makeStep([{ approvalId: 'a1' }]);
      const { app, view } = fakeBoltApp();
      const decider = { record: vi.fn(async () => outcome), publish: vi.fn(async () => {}), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
      registerDenyWithReason(app, { store: storeWith(step), channelsOf: async () => new Set([step.channel]), decider, messenger: recordingMessenger().messenger, logger: pino({ level: 'silent' }), audit: createMemoryAuditLog({ logger: pino({ level: 'silent' }) }) });
      const { args, ack } = formSubmit({ reference: { stepId: step.stepId, approvalId: 'a1' }, blocks: [{ type: 'input', block_id: DENY_REASON_BLOCK_ID }] });
      ack.mockRejectedValue(headersSent());
      await view(DENY_REASON_CALLBACK_ID)(args);
      expect(decider.record).toHaveBeenCalledOnce();
      expect(ack).toHaveBeenCalledOnce();
      expect(decider.publish, 'the decision recorded was left unpublished').toHaveBeenCalledExactlyOnceWith(outcome);
    });
  }
});
