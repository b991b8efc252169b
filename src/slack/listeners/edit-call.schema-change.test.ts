import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import type { ToolSchemas } from '../../tools/tool-schemas.js';
import { APPROVAL_ACTION_IDS, encodeCallFormMetadata } from '../blocks/action-ids.js';
import { stateFromBlocks } from '../modals/view-state.test-support.js';
import { EDIT_CALL_CALLBACK_ID } from '../views/edit-call-view.js';
import { cardClick, fakeBoltApp, recordingMessenger, storeWith } from './bolt-listener.test-support.js';
import { registerEditCall, SCHEMA_CHANGED_TEXT, toolUnavailableText } from './edit-call.js';

const SOURCE_THEN_TARGET = { type: 'object', properties: { source: { type: 'string' }, target: { type: 'string' } }, required: ['source', 'target'], additionalProperties: false };
const TARGET_THEN_SOURCE = { type: 'object', properties: { target: { type: 'string' }, source: { type: 'string' } }, required: ['source', 'target'], additionalProperties: false };
const REGION_FIRST = { type: 'object', properties: { region: { type: 'string' }, source: { type: 'string' }, target: { type: 'string' } }, required: ['source', 'target'], additionalProperties: false };
const input = { source: 'backup-bucket', target: 'prod-db' };

/**
 * Bob opens Edit on a restore, the tool's MCP server restarts with a new version of its schema
 * while the form is open, and Bob submits the form untouched. Inputs are read back by position
 * (f:0, f:1), so without a check the submit would approve the values in other properties, in
 * Bob's name.
 */
function openEditForm() {
  let schema: object | undefined = SOURCE_THEN_TARGET;
  const toolSchemas = {
    jsonSchema: vi.fn(async () => schema),
    validate: vi.fn(async (_tool: string, value: unknown) => ({ success: true, value })),
    validatedWith: () => 'json-schema',
  } as unknown as ToolSchemas;
  const step = makeStep([{ approvalId: 'apv1', input }]);
  const record = vi.fn(async () => ({ recorded: false, message: 'recorded nothing in this test' }));
  const decider = { record, publish: vi.fn(), showIfOutdated: vi.fn(async () => {}) } as unknown as CallDecider;
  const { app, action, view } = fakeBoltApp();
  const organisationMembership = { of: async () => 'member' as const };
  registerEditCall(app, { store: storeWith(step), channelsOf: async () => new Set([step.channel]), decider, messenger: recordingMessenger().messenger, toolSchemas, logger: pino({ level: 'silent' }), audit: createMemoryAuditLog({ logger: pino({ level: 'silent' }) }), organisationMembership });
  return {
    step,
    record,
    changeSchema: (next: object | undefined) => {
      schema = next;
    },
    async open() {
      const click = cardClick({ actionId: APPROVAL_ACTION_IDS.edit, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, channel: step.channel, teamId: step.teamId });
      await action(APPROVAL_ACTION_IDS.edit)(click.args);
      return (click.views.open.mock.calls[0] as unknown as [{ view: { blocks: any[]; private_metadata: string } }])[0].view;
    },
    async submit(opened: { blocks: any[]; private_metadata: string }) {
      const submitted = { private_metadata: opened.private_metadata, blocks: opened.blocks, state: { values: stateFromBlocks(opened.blocks) } };
      const ack = vi.fn(async (_response?: unknown) => {});
      await view(EDIT_CALL_CALLBACK_ID)({ ack, body: { user: { id: 'U0BOB', team_id: step.teamId }, team: { id: step.teamId }, view: submitted }, view: submitted, client: {} });
      return ack;
    },
  };
}

function firstInputBlockId(blocks: any[]): string {
  return blocks.find((block) => block.type === 'input').block_id;
}

describe('Edit form submitted after the tool schema changed', () => {
  it('refuses the submit when the properties now come in another order, and records nothing', async () => {
    const form = openEditForm();
    const opened = await form.open();
    expect(JSON.stringify(opened.blocks)).toContain('backup-bucket');

    form.changeSchema(TARGET_THEN_SOURCE);
    const ack = await form.submit(opened);

    expect(form.record).not.toHaveBeenCalled();
    expect(ack).toHaveBeenCalledExactlyOnceWith({ response_action: 'errors', errors: { [firstInputBlockId(opened.blocks)]: SCHEMA_CHANGED_TEXT } });
  });

  it('refuses the submit when a new property comes first, and records nothing', async () => {
    const form = openEditForm();
    const opened = await form.open();

    form.changeSchema(REGION_FIRST);
    const ack = await form.submit(opened);

    expect(form.record).not.toHaveBeenCalled();
    expect(ack).toHaveBeenCalledExactlyOnceWith({ response_action: 'errors', errors: { [firstInputBlockId(opened.blocks)]: SCHEMA_CHANGED_TEXT } });
  });

  it('records the values as shown when the schema is unchanged', async () => {
    const form = openEditForm();
    const opened = await form.open();

    await form.submit(opened);

    expect(form.record).toHaveBeenCalledOnce();
    expect((form.record.mock.calls[0] as unknown as [{ action: { input: unknown } }])[0].action.input).toEqual(input);
  });

  it('refuses a form opened before forms carried their layout, since it cannot be checked', async () => {
    const form = openEditForm();
    const opened = await form.open();
    const withoutLayout = { ...opened, private_metadata: encodeCallFormMetadata({ stepId: form.step.stepId, approvalId: 'apv1', version: 0, channel: form.step.channel }) };

    const ack = await form.submit(withoutLayout);

    expect(form.record).not.toHaveBeenCalled();
    expect(ack).toHaveBeenCalledExactlyOnceWith({ response_action: 'errors', errors: { [firstInputBlockId(opened.blocks)]: SCHEMA_CHANGED_TEXT } });
  });

  it('says the tool is no longer available when it went away while the form was open (the request is still open), keeps the form and records nothing', async () => {
    const form = openEditForm();
    const opened = await form.open();

    form.changeSchema(undefined);
    const ack = await form.submit(opened);

    expect(form.record).not.toHaveBeenCalled();
    expect(ack).toHaveBeenCalledExactlyOnceWith({
      response_action: 'errors',
      errors: { [firstInputBlockId(opened.blocks)]: `${toolUnavailableText('restart_service')} Nothing changed.` },
    });
  });
});
