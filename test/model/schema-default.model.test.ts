import { jsonSchema } from 'ai';
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createCallDecider } from '../../src/approvals/decide-call.js';
import { evaluateCallPolicy } from '../../src/approvals/evaluate-call-policy.js';
import { approvedVersion } from '../../src/approvals/input-version.js';
import { createMemoryAuditLog } from '../../src/audit/memory-audit-log.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { newThreadState } from '../../src/store/thread-state.js';
import { createToolSchemas } from '../../src/tools/tool-schemas.js';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';

/**
 * Property form of src/approvals/schema-default-rules.test.ts: an MCP-style tool (JSON Schema, `namespace` defaults to "prod", as
 * FastMCP emits for `namespace: str = "prod"`) under a two-person rule for prod. Whatever the
 * model proposes and whatever approvers click or edit, a call the server will run on prod (its
 * input's namespace, or the schema's default when absent) must never be approved by fewer than two
 * prod approvers.
 */
const RUNS = Math.max(200, Number(process.env.PROPERTY_RUNS ?? 200));
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
      approvers: [channel]
      allowSelfApproval: false
`,
  'schema-default.yml',
);
const schema = { type: 'object', properties: { service: { type: 'string' }, namespace: { type: 'string', default: 'prod' } }, required: ['service'], additionalProperties: false };
const deploy: ToolDefinition = { name: 'k8s.deploy', description: 'Deploy', inputSchema: jsonSchema<Record<string, unknown>>(schema as never), execute: async () => ({ ok: true }) };
const toolSchemas = createToolSchemas({ definitions: [deploy] });
const USERS = ['U0LEAD1', 'U0LEAD2', 'U0CAROL', 'U0REQUESTER'] as const;
const INPUTS: ReadonlyArray<Record<string, unknown>> = [{ service: 'api', namespace: 'prod' }, { service: 'api', namespace: 'staging' }, { service: 'api' }];
/** Where the MCP server deploys: the schema's default fills a missing namespace. */
const runsOn = (input: unknown) => ((input as { namespace?: string }).namespace ?? 'prod');

type Click = { user: (typeof USERS)[number]; kind: 'approve' | 'edit'; input: number };
const clickArb: fc.Arbitrary<Click> = fc.record({ user: fc.constantFrom(...USERS), kind: fc.constantFrom('approve', 'edit'), input: fc.nat(INPUTS.length - 1) });

describe('a JSON-Schema tool with a defaulted conditioned field (model-based)', () => {
  it('no prod deploy is approved by fewer than two prod approvers, for any proposal and clicks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(INPUTS.length - 1), fc.array(clickArb, { maxLength: 8 }), async (proposed, clicks) => {
        const logger = pino({ level: 'silent' });
        const audit = createMemoryAuditLog({ logger });
        const store = createMemoryStore({ audit });
        const context = { requesterId: 'U0REQUESTER', teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' };
        const decider = createCallDecider({
          store,
          messenger: { updateStepCard: async () => {} } as unknown as ThreadMessenger,
          worker: { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off', lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} },
          logger,
          audit,
          resolveGroups: async () => new Map(),
          evaluateInput: ({ call, input }) => evaluateCallPolicy({ policy, definition: deploy, toolName: call.toolName, input, context }),
        });
        const thread = newThreadState(context, Date.now());
        const step = await buildPendingStep({
          thread,
          requesterId: context.requesterId,
          requests: [{ kind: 'approval', approvalId: 'apv1', toolCallId: 'call1', toolName: 'k8s.deploy', input: INPUTS[proposed]! }],
          policy,
          definitionOf: () => deploy,
          stepId: 'stepmodel1',
          now: Date.now(),
        });
        const token = (await store.tryLock(thread.threadKey, 60_000))!;
        await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: thread.threadKey, token } });
        await store.releaseLockIfIdle({ threadKey: thread.threadKey, token }, 60_000);
        for (const click of clicks) {
          const stored = (await store.getStep(step.stepId))!;
          if (stored.phase !== 'pending') break;
          const version = stored.calls[0]!.versions!.at(-1)!.number;
          const edited = INPUTS[click.input]!;
          const validated = await toolSchemas.validate('k8s.deploy', edited);
          if (!validated.success) continue;
          await decider.record({
            stepId: step.stepId,
            approvalId: 'apv1',
            userId: click.user,
            origin: { teamId: context.teamId, channel: context.channel, membership: 'member' },
            action: click.kind === 'approve' ? { kind: 'approve', version } : { kind: 'edit', fromVersion: version, input: validated.value, submittedInput: edited },
          });
        }
        const final = (await store.getStep(step.stepId))!;
        const ran = approvedVersion(final, final.calls[0]!);
        if (!ran || runsOn(ran.input) !== 'prod') return;
        const approvers = final.decisions.apv1?.approvedBy ?? [];
        expect(approvers.filter((user) => user === 'U0LEAD1' || user === 'U0LEAD2'), `ran ${JSON.stringify(ran.input)} on prod approved by ${approvers.join(', ')}`).toHaveLength(2);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
