import { jsonSchema } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createToolApproval, type GateBasis } from '../agent/tool-set.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { parseConfigFile } from '../config/config-file.js';
import { buildPendingStep } from '../conversation/build-pending-step.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createToolSchemas } from '../tools/tool-schemas.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { createCallDecider } from './decide-call.js';
import { evaluateCallPolicy } from './evaluate-call-policy.js';

/**
 * An MCP tool (or any JSON-Schema tool) whose schema gives the conditioned field a
 * `default` (FastMCP / pydantic emit exactly this for `namespace: str = "prod"`). The server fills
 * the default in; the policy never sees it (ajv runs with useDefaults: false, nothing else applies
 * defaults), although input-condition.ts says the caller must pass the input after defaults.
 * So a single prod approver can edit `namespace` away: the schema accepts it, the new version falls
 * under the laxer rule, their own edit is its one approval, and the call runs on prod with one
 * approval where the policy demands two.
 */
const config = parseConfigFile(
  `
policy:
  rules:
    - name: prod deploys
      tools: ["k8s.deploy"]
      input: [{ field: namespace, equals: prod }]
      approvers: [U0LEAD1, U0LEAD2]
      required: 2
    - name: other deploys
      tools: ["k8s.deploy"]
      approvers: [channel]
      required: 1
`,
  'schema-default.yml',
);

const schema = {
  type: 'object',
  properties: { service: { type: 'string' }, namespace: { type: 'string', default: 'prod' } },
  required: ['service'],
  additionalProperties: false,
} as const;

// Shaped as mcp-tool-definition.ts's toDefinition makes an MCP tool (no approval of its own).
const deploy: ToolDefinition = {
  name: 'k8s.deploy',
  description: 'Deploy a service',
  inputSchema: jsonSchema<Record<string, unknown>>(schema as never),
  execute: async () => ({ ok: true }),
};

const TEAM = 'T0TEAM';
const CHANNEL = 'C0OPS';
const logger = pino({ level: 'silent' });

async function setup(input: Record<string, unknown>) {
  const audit = createMemoryAuditLog({ logger });
  const store = createMemoryStore({ audit });
  const messenger = { updateStepCard: async () => {} } as unknown as ThreadMessenger;
  const context = { requesterId: 'U0REQUESTER', teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000100' };
  const decider = createCallDecider({
    store,
    messenger,
    worker: { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off', lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} },
    logger,
    audit,
    resolveGroups: async () => new Map(),
    evaluateInput: ({ call, input: candidate }) => evaluateCallPolicy({ policy: config.policy, definition: deploy, toolName: call.toolName, input: candidate, context }),
  });
  const thread = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: context.threadTs }, Date.now());
  const step = await buildPendingStep({
    thread,
    requesterId: context.requesterId,
    requests: [{ kind: 'approval', approvalId: 'apv1', toolCallId: 'call1', toolName: 'k8s.deploy', input }],
    policy: config.policy,
    definitionOf: () => deploy,
    stepId: 'stepschemadefault1',
    now: Date.now(),
  });
  const token = (await store.tryLock(thread.threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: thread.threadKey, token } });
  await store.releaseLockIfIdle({ threadKey: thread.threadKey, token }, 60_000);
  return { store, decider, step };
}

describe('a JSON-Schema (MCP) tool whose conditioned field has a schema default', () => {
  it('one prod approver cannot run a prod deploy alone by editing the defaulted field away', async () => {
    const { store, decider, step } = await setup({ service: 'api', namespace: 'prod' });
    expect(step.calls[0]!.policy).toMatchObject({ required: 2 });
    // The edit form's submit: the server validates it against the tool's schema, which accepts it.
    const edited = { service: 'api' };
    const validated = await createToolSchemas({ definitions: [deploy] }).validate('k8s.deploy', edited);
    expect(validated).toEqual({ success: true, value: edited });
    // The MCP server receives `{ service: 'api' }` and deploys to its default namespace: prod.
    const outcome = await decider.record({
      stepId: step.stepId,
      approvalId: 'apv1',
      userId: 'U0LEAD1',
      origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' },
      action: { kind: 'edit', fromVersion: 0, input: edited, submittedInput: edited },
    });
    expect(outcome.recorded).toBe(true);
    const stored = await store.getStep(step.stepId);
    // Expected: still waiting for a second prod approver. Actual: approved by U0LEAD1 alone.
    expect(stored?.decisions.apv1, 'a prod deploy was approved by one person under a two-person rule').toBeUndefined();
  });

  it('a model call that leaves the defaulted field out is judged under the prod rule', async () => {
    const { step } = await setup({ service: 'api' });
    expect(step.calls[0]!.policy, 'the call the server runs on prod got the laxer rule').toMatchObject({ required: 2 });
  });

  it("the gate asks for a call that leaves the defaulted field out when only prod's rule asks", async () => {
    const { policy } = parseConfigFile(
      `
policy:
  rules:
    - name: prod deploys
      tools: ["k8s.deploy"]
      input: [{ field: namespace, equals: prod }]
      approvers: [U0LEAD1, U0LEAD2]
      required: 2
    - name: other deploys
      tools: ["k8s.deploy"]
      approval: never
`,
      'schema-default.yml',
    );
    const context = { requesterId: 'U0REQUESTER', teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000100' };
    const gate = createToolApproval({ definitions: [deploy], context, policy, bases: new Map<string, GateBasis>() }) as (call: {
      toolCall: { toolCallId: string; toolName: string; input: unknown };
    }) => Promise<unknown>;
    expect(await gate({ toolCall: { toolCallId: 'c1', toolName: 'k8s.deploy', input: { service: 'api' } } })).toBe('user-approval');
    expect(await gate({ toolCall: { toolCallId: 'c2', toolName: 'k8s.deploy', input: { service: 'api', namespace: 'staging' } } })).toBe('not-applicable');
  });
});
