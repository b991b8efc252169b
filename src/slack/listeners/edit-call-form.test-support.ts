import { jsonSchema } from 'ai';
import { pino } from 'pino';
import { vi } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import type { ToolDefinition } from '../../tools/tool-definition.js';
import { createToolSchemas } from '../../tools/tool-schemas.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import { stateFromBlocks } from '../modals/view-state.test-support.js';
import { EDIT_CALL_CALLBACK_ID } from '../views/edit-call-view.js';
import { cardClick, fakeBoltApp, recordingMessenger, storeWith } from './bolt-listener.test-support.js';
import { registerEditCall } from './edit-call.js';

export interface OpenedForm {
  blocks: any[];
  private_metadata: string;
}

/**
 * The Edit form of a JSON-Schema tool (an MCP server's schema, validated with ajv), driven through
 * the real listener and the real ToolSchemas: Bob opens Edit, fills the form as Slack would send it,
 * and submits. The decider records nothing; `record` shows what it was asked to record.
 */
export function jsonSchemaEditForm(schema: object, input: Record<string, unknown>) {
  const tool = { name: 'restart_service', description: 'Restart a service', inputSchema: jsonSchema(schema as never), execute: async () => 'ok' } as unknown as ToolDefinition;
  const toolSchemas = createToolSchemas({ definitions: [tool] });
  const step = makeStep([{ approvalId: 'apv1', input }]);
  const record = vi.fn(async () => ({ recorded: false, message: 'recorded nothing in this test' }));
  const decider = { record, publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
  const { app, action, view } = fakeBoltApp();
  const organisationMembership = { of: async () => 'member' as const };
  const silent = pino({ level: 'silent' });
  registerEditCall(app, { store: storeWith(step), channelsOf: async () => new Set([step.channel]), decider, messenger: recordingMessenger().messenger, toolSchemas, logger: silent, audit: createMemoryAuditLog({ logger: silent }), organisationMembership });
  return {
    record,
    toolSchemas,
    async open(): Promise<OpenedForm> {
      const click = cardClick({ actionId: APPROVAL_ACTION_IDS.edit, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, channel: step.channel, teamId: step.teamId });
      await action(APPROVAL_ACTION_IDS.edit)(click.args);
      return (click.views.open.mock.calls[0] as unknown as [{ view: OpenedForm }])[0].view;
    },
    async submit(opened: OpenedForm, values = stateFromBlocks(opened.blocks)) {
      const submitted = { private_metadata: opened.private_metadata, blocks: opened.blocks, state: { values } };
      const ack = vi.fn(async (_response?: unknown) => {});
      await view(EDIT_CALL_CALLBACK_ID)({ ack, body: { user: { id: 'U0BOB', team_id: step.teamId }, team: { id: step.teamId }, view: submitted }, view: submitted, client: {} });
      return ack;
    },
  };
}

/** The input the decider was asked to record as the edit. */
export const recordedInput = (record: ReturnType<typeof vi.fn>) => (record.mock.calls[0] as unknown as [{ action: { input: unknown } }])[0].action.input;
