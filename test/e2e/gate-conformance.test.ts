import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asSchema, type JSONSchema7, type ModelMessage } from 'ai';
import { mockStreamingModel } from '../helpers/mock-streaming-model.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingStep } from '../../src/approvals/pending-step.js';
import { decidedStep } from '../../src/approvals/pending-step.test-support.js';
import { approvedRunsFor } from '../../src/agent/approved-runs.js';
import { resumeToolMessage } from '../../src/agent/decision-messages.js';
import { runTurn } from '../../src/agent/run-turn.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import { TOOL_SOURCE_KINDS, withWireToolNames, wireToolName, type ToolSourceKind } from '../../src/tools/load-tools.js';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { scaleWorkerTool, type ScaleRequest } from '../fixtures/custom-tool-example.js';
import { loadToolSources, newFilesystemRoot, startFakeApi, toolSourcesYaml, type FakeApi, type LoadedSources } from '../fixtures/tool-source-fixtures.js';
import { CHANNEL, cardButtons, nextTs, recordingToolsYaml, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * One gate for every tool source. Every tool the bot registers (ask_user, command tools,
 * http_request, MCP tools, custom tools) is driven through the real turn path and must not
 * execute before an approval is recorded, and must execute exactly once after it. A new source
 * kind fails the coverage check until it is added here.
 */

let api: FakeApi;
let root: string;
let sources: LoadedSources;
const deployed: ScaleRequest[] = [];
const COMMAND_LOG = join(newFilesystemRoot(), 'invocations.log');

beforeAll(async () => {
  api = await startFakeApi();
  root = newFilesystemRoot();
  sources = await loadToolSources({
    yaml: `${recordingToolsYaml(COMMAND_LOG)}\n${toolSourcesYaml({ apiOrigin: api.origin, root })}`,
    customTools: [scaleWorkerTool(async (request) => void deployed.push(request))],
  });
});

afterAll(async () => {
  await sources?.loaded.close();
  await api?.close();
});

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };

function callReply(toolName: string, input: unknown) {
  // The model answers with the wire name, as a real model API would.
  return {
    content: [{ type: 'tool-call' as const, toolCallId: 'call_1', toolName: wireToolName(toolName), input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}
const textReply = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });

/** A valid input for any tool, from its JSON Schema (the one the model sees), with a few overrides. */
function sampleInput(tool: ToolDefinition, schema: JSONSchema7): unknown {
  if (tool.name === 'http_request') return { method: 'POST', url: `${api.origin}/api/conformance`, body: '{}' };
  if (tool.name === 'scale_worker') return { namespace: 'prod', replicas: 4 };
  return sample(schema, tool.name);
}

function sample(definition: JSONSchema7 | boolean, key: string): unknown {
  if (typeof definition === 'boolean') return 'x';
  const schema = definition;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const name of schema.required ?? []) value[name] = sample(schema.properties?.[name] ?? {}, name);
      return value;
    }
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(Array.isArray(schema.items) ? (schema.items[0] ?? {}) : (schema.items ?? {}), key));
    case 'number':
    case 'integer':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      // Paths stay inside the MCP server's directory.
      if (/path|source|destination/i.test(key)) return join(root, `conformance-${key}.txt`);
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
  }
}

/** The same definitions, with `execute` counted: the gate calls it, or it does not. */
function counted(definitions: readonly ToolDefinition[], executed: string[]): ToolDefinition[] {
  return definitions.map((definition) => {
    const execute = definition.execute;
    if (!execute) return definition;
    return { ...definition, execute: async (input: unknown, toolContext) => (executed.push(definition.name), execute(input, toolContext)) };
  });
}

function decided(paused: Awaited<ReturnType<typeof runTurn>>, outcome: 'approved' | 'denied'): PendingStep {
  return decidedStep(paused.approvalRequests, Object.fromEntries(paused.approvalRequests.map((request) => [request.approvalId, { outcome, userId: 'UBOB' }])));
}

describe('the gate, for every registered tool of every source (runTurn with a scripted model)', () => {
  it('covers every tool source kind', () => {
    const kinds = new Set(sources.loaded.tools.map((tool) => sources.loaded.sourceOf(tool.name)?.kind));
    expect([...kinds].sort()).toEqual([...TOOL_SOURCE_KINDS].sort());
    expect(sources.loaded.tools.length).toBeGreaterThan(15);
  });

  const forceApproval = parseConfigFile('policy: { rules: [{ name: everything, tools: ["**"], approval: always }] }', 'conformance.yml').policy;
  const defaultPolicy = parseConfigFile('', 'conformance.yml').policy;

  for (const [label, policy] of [
    ['a policy that gates everything', forceApproval],
    ['no policy (own rules; MCP fails closed)', defaultPolicy],
  ] as const) {
    it(`never executes a gated call before approval and executes it exactly once after, under ${label}`, async () => {
      const report: Array<{ tool: string; kind: ToolSourceKind | undefined; gated: boolean }> = [];
      for (const tool of [...sources.loaded.tools]) {
        const executed: string[] = [];
        const definitions = counted(sources.loaded.tools, executed);
        const input = sampleInput(tool, await asSchema(tool.inputSchema).jsonSchema);
        const messages: ModelMessage[] = [{ role: 'user', content: `use ${tool.name}` }];
        const paused = await runTurn({
          model: withWireToolNames(mockStreamingModel([callReply(tool.name, input), textReply('ran without approval')] )),
          instructions: 'test',
          definitions,
          policy,
          messages,
          context,
          maxSteps: 3,
        });
        const waiting = paused.approvalRequests.filter((request) => request.toolName === tool.name);
        report.push({ tool: tool.name, kind: sources.loaded.sourceOf(tool.name)?.kind, gated: waiting.length > 0 });

        if (waiting.length === 0) {
          // Not gated: allowed only where the rules say so, and then it ran once, at once.
          expect(policy, `${tool.name} was not gated under a policy that gates everything`).not.toBe(forceApproval);
          expect(executed, tool.name).toEqual([tool.name]);
          continue;
        }
        expect(executed, `${tool.name} ran before approval`).toEqual([]);
        expect(waiting).toEqual([expect.objectContaining({ kind: tool.execute ? 'approval' : 'question' })]);
        if (!tool.execute) continue; // ask_user: a human answers it; there is nothing to execute.

        const denied = await runTurn({
          model: withWireToolNames(mockStreamingModel([textReply('understood')] )),
          instructions: 'test',
          definitions,
          policy,
          messages: [...messages, ...paused.responseMessages, resumeToolMessage(decided(paused, 'denied'))],
          context,
          maxSteps: 3,
        });
        expect(denied.text).toBe('understood');
        expect(executed, `${tool.name} ran after a denial`).toEqual([]);

        const approved = decided(paused, 'approved');
        const history = [...messages, ...paused.responseMessages, resumeToolMessage(approved)];
        const resumed = await runTurn({
          model: withWireToolNames(mockStreamingModel([textReply('done')] )),
          instructions: 'test',
          definitions,
          policy,
          messages: history,
          context,
          maxSteps: 3,
          approvedRuns: approvedRunsFor(approved),
        });
        expect(executed, `${tool.name} after approval`).toEqual([tool.name]);

        // A later turn over the same history never runs the approved call again.
        await runTurn({
          model: withWireToolNames(mockStreamingModel([textReply('anything else?')] )),
          instructions: 'test',
          definitions,
          policy,
          messages: [...history, ...resumed.responseMessages, { role: 'user', content: 'thanks' }],
          context,
          maxSteps: 3,
        });
        expect(executed, `${tool.name} ran again in a later turn`).toEqual([tool.name]);
      }

      // What defaults gate: command and custom tools by their own rules, every MCP tool (no rule).
      if (policy === defaultPolicy) {
        const gated = (name: string) => report.find((entry) => entry.tool === name)?.gated;
        expect(report.filter((entry) => entry.kind === 'mcp').every((entry) => entry.gated)).toBe(true);
        expect(gated('restart_service')).toBe(true);
        expect(gated('http_request')).toBe(true);
        expect(gated('scale_worker')).toBe(true);
        expect(gated('get_pods')).toBe(false);
      } else expect(report.every((entry) => entry.gated)).toBe(true);
    }, 60_000);
  }
});

describe('the gate, end to end through Slack, for one gated tool of each executing source', () => {
  const harness = useHarnesses();

  interface Case {
    kind: ToolSourceKind;
    call: { name: string; arguments: Record<string, unknown> };
    /** How many times the call's side effect has happened. */
    effects: (h: Harness) => number;
  }

  const target = () => join(root, 'gate-e2e.txt');
  /** Writes of the MCP case counted so far: each is taken out of the file, so writing it again shows. */
  let mcpWrites = 0;
  const cases: Case[] = [
    {
      kind: 'command',
      call: { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } },
      effects: (h) => h.invocations().filter((argv) => argv[0] === 'rollout').length,
    },
    {
      kind: 'http',
      call: { name: 'http_request', arguments: { method: 'DELETE', url: '{api}/api/deploys/7' } },
      effects: () => api.requests.filter((request) => request.method === 'DELETE').length,
    },
    {
      kind: 'mcp',
      call: { name: 'fs.write_file', arguments: { path: '{target}', content: 'approved' } },
      effects: () => {
        const found = existsSync(target()) ? readFileSync(target(), 'utf8').split('approved').length - 1 : 0;
        if (found > 0) writeFileSync(target(), '');
        mcpWrites += found;
        return mcpWrites;
      },
    },
    {
      kind: 'custom',
      call: { name: 'scale_worker', arguments: { namespace: 'prod', replicas: 6 } },
      effects: () => deployed.filter((request) => request.namespace === 'prod' && request.replicas === 6).length,
    },
  ];

  it('has a case for every source kind that executes', () => {
    expect(cases.map((entry) => entry.kind).sort()).toEqual(TOOL_SOURCE_KINDS.filter((kind) => kind !== 'builtin').sort());
  });

  it.each(cases)('$kind: no execution before the recorded approval, exactly one after, none on a second click', async ({ call, effects }) => {
    const h = await harness({ tools: sources.harnessTools });
    const args = JSON.parse(JSON.stringify(call.arguments).replace('{api}', api.origin).replace('{target}', target().replaceAll('\\', '\\\\')));
    h.openai.enqueue({ toolCalls: [{ name: call.name, arguments: args }] }, { text: `${call.name} done.` });
    const before = effects(h);
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: `run ${call.name}`, ts: threadTs });

    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card', timeoutMs: 10_000 });
    await h.settled();
    expect(effects(h)).toBe(before);
    const pendingAudit = (await h.auditEvents()).map((event) => event.type);
    expect(pendingAudit).toEqual(['approval-requested']);

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === `${call.name} done.`), { message: 'the answer', timeoutMs: 10_000 });
    expect(effects(h)).toBe(before + 1);

    await h.click({ user: 'UCAROL', cardTs: card.ts, threadTs, ...approve });
    await h.settled();
    expect(effects(h)).toBe(before + 1);

    const audit = await waitFor(async () => {
      const events = await h.auditEvents();
      return events.some((event) => event.type === 'tool-executed') ? events : undefined;
    });
    const order = audit.map((event) => event.type);
    expect(order.indexOf('approval-requested')).toBeLessThan(order.indexOf('decision'));
    expect(order.indexOf('decision')).toBeLessThan(order.indexOf('tool-executed'));
    expect(audit.find((event) => event.type === 'decision')).toMatchObject({ outcome: 'approved', userId: 'UBOB', toolName: call.name });
    expect(audit.filter((event) => event.type === 'tool-executed')).toHaveLength(1);
    expect(JSON.stringify(h.slack.messages(CHANNEL, threadTs))).toContain(call.name);
  });
});
