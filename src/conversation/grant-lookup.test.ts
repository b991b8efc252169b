import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import { runTurn } from '../agent/run-turn.js';
import type { Grant } from '../approvals/grant.js';
import { evaluatePolicy } from '../approvals/policy/evaluate-policy.js';
import { parseConfigFile } from '../config/config-file.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import { definitionFingerprintOf } from '../tools/definition-fingerprint.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { createGrantLookup } from './grant-lookup.js';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
const textReply = { content: [{ type: 'text' as const, text: 'done' }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] };
const callReply = (namespace: string) => ({
  content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'restart', input: JSON.stringify({ namespace }) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});

/** Each call parses anew, as a deploy's fresh process does: no config object is shared between "before" and "after". */
const policyOf = (rules: string): PolicyConfig => parseConfigFile(`policy:\n  rules:\n${rules}`, 'countersign.yml').policy;

const STAGING = '    - { tools: [restart], input: [{ field: namespace, equals: staging }] }\n';
const PROD = '    - { tools: [restart], input: [{ field: namespace, equals: prod }] }\n';
const EVERY_RESTART = '    - { tools: [restart] }\n';
const EVERY_RESTART_SRE = '    - { tools: [restart], approvers: [UCAROL] }\n';
const named = (rule: string) => rule.replace('{ tools', '{ name: restarts, tools');

/**
 * A channel grant as "Approve & allow…" stores it: Bob approved Alice's restart in `namespace`,
 * and the grant keeps the policy evaluation that approval was given under (config `before`).
 */
function grantUnder({ before, namespace }: { before: PolicyConfig; namespace: string }): Grant {
  const evaluation = evaluatePolicy({ policy: before, toolName: 'restart', channel: 'C1', input: { namespace } });
  const now = Date.now();
  return { grantId: 'g1', teamId: 'T1', channel: 'C1', scope: 'channel', toolName: 'restart', identicalArgumentsOnly: false, input: { namespace }, evaluation, grantedBy: 'UBOB', createdAt: now, expiresAt: now + 3_600_000 };
}

/** The restart tool; `does` stands for what its source declares it runs (a command tool's argv template). */
function restartTool(does?: string): ToolDefinition {
  return { name: 'restart', description: 'r', inputSchema: z.object({ namespace: z.string() }), approval: 'always', execute: async () => 'ok', ...(does === undefined ? {} : { definitionFingerprint: does }) };
}

/** Alice's later call in the channel, after a deploy brought config `after`: the real gate, the real grant lookup. */
async function callAfterDeploy({ grant, after, namespace, toolDoes }: { grant: Grant; after: PolicyConfig; namespace: string; toolDoes?: string }) {
  const store = { listGrants: async ({ hideEndedBy }: { hideEndedBy?: number }) => [grant].filter((stored) => hideEndedBy === undefined || stored.expiresAt > hideEndedBy) };
  const lookup = createGrantLookup({ store: store as never, resolveGroups: async () => new Map(), channelsOf: async () => new Set(['C1']), now: () => Date.now() });
  const executed: unknown[] = [];
  const definitions: ToolDefinition[] = [{ ...restartTool(toolDoes), execute: async (input) => executed.push(input) && 'ok' }];
  const outcome = await runTurn({
    model: mockStreamingModel([callReply(namespace), textReply]),
    instructions: 'test',
    definitions,
    policy: after,
    messages: [{ role: 'user', content: `restart ${namespace}` }],
    context: { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' },
    maxSteps: 5,
    findGrant: lookup({ teamId: 'T1', channel: 'C1', threadTs: '1.1' } as never, 'UALICE'),
    assertHeld: async () => {},
  });
  return { cardFor: outcome.approvalRequests.map((request) => request.toolName), executed };
}

describe('a grant after a deploy changed countersign.yml', () => {
  it.each([
    ['the unnamed rule at its position now covers prod instead of staging', { before: STAGING, after: PROD, grantedFor: 'staging' }],
    ['a prod rule was inserted above the staging rule it was given under', { before: STAGING, after: PROD + STAGING, grantedFor: 'staging' }],
    ['the rules were reordered, so prod is now rules[0]', { before: STAGING + PROD, after: PROD + STAGING, grantedFor: 'staging' }],
    ['the rule at its position now names stricter approvers', { before: EVERY_RESTART, after: EVERY_RESTART_SRE, grantedFor: 'prod' }],
    ['a named rule kept its name but now covers prod', { before: named(STAGING), after: named(PROD), grantedFor: 'staging' }],
  ])('does not let a prod restart through when %s: a card asks for it', async (_case, { before, after, grantedFor }) => {
    const grant = grantUnder({ before: policyOf(before), namespace: grantedFor });
    const call = await callAfterDeploy({ grant, after: policyOf(after), namespace: 'prod' });
    expect(call.cardFor).toEqual(['restart']);
    expect(call.executed).toEqual([]);
  });

  it('still lets calls through when the rule is unchanged, even if it moved', async () => {
    const unchanged = await callAfterDeploy({ grant: grantUnder({ before: policyOf(STAGING), namespace: 'staging' }), after: policyOf(STAGING), namespace: 'staging' });
    expect(unchanged).toEqual({ cardFor: [], executed: [{ namespace: 'staging' }] });
    const moved = await callAfterDeploy({ grant: grantUnder({ before: policyOf(STAGING + PROD), namespace: 'staging' }), after: policyOf(PROD + STAGING), namespace: 'staging' });
    expect(moved).toEqual({ cardFor: [], executed: [{ namespace: 'staging' }] });
  });

  it('still lets calls through under the defaults (no rule covers the tool) while they need the same approvers', async () => {
    const call = await callAfterDeploy({ grant: grantUnder({ before: policyOf('    []\n'), namespace: 'staging' }), after: policyOf('    []\n'), namespace: 'prod' });
    expect(call).toEqual({ cardFor: [], executed: [{ namespace: 'prod' }] });
  });

  it('does not apply a grant stored before grants recorded which rule definition they were given under', async () => {
    const grant = grantUnder({ before: policyOf(STAGING), namespace: 'staging' });
    grant.evaluation = { ...grant.evaluation, rule: { index: 0 } };
    const call = await callAfterDeploy({ grant, after: policyOf(STAGING), namespace: 'staging' });
    expect(call.cardFor).toEqual(['restart']);
    expect(call.executed).toEqual([]);
  });

  it('does not apply a grant once a deploy changed what the tool does (same name, rule and input)', async () => {
    const grant = { ...grantUnder({ before: policyOf(STAGING), namespace: 'staging' }), definitionFingerprint: await definitionFingerprintOf(restartTool('rollout restart')) };
    const changed = await callAfterDeploy({ grant, after: policyOf(STAGING), namespace: 'staging', toolDoes: 'delete' });
    expect(changed).toEqual({ cardFor: ['restart'], executed: [] });
    const same = await callAfterDeploy({ grant, after: policyOf(STAGING), namespace: 'staging', toolDoes: 'rollout restart' });
    expect(same).toEqual({ cardFor: [], executed: [{ namespace: 'staging' }] });
  });
});

describe('a grant in a turn someone steered by answering its question', () => {
  const FOUR_EYES = policyOf('    - { tools: [restart], approvers: [channel], allowSelfApproval: false }\n');
  const lookupIn = (instigatorIds?: string[]) => {
    const grant = grantUnder({ before: FOUR_EYES, namespace: 'prod' });
    const lookup = createGrantLookup({ store: { listGrants: async () => [grant] } as never, resolveGroups: async () => new Map(), channelsOf: async () => new Set(['C1']), now: () => Date.now() });
    const thread = { teamId: 'T1', channel: 'C1', threadTs: '1.1', ...(instigatorIds ? { instigatorIds } : {}) };
    const evaluation = evaluatePolicy({ policy: FOUR_EYES, toolName: 'restart', channel: 'C1', input: { namespace: 'prod' } });
    return lookup(thread as never, 'schedule:heartbeat')({ toolName: 'restart', input: { namespace: 'prod' }, evaluation });
  };

  it("covers a scheduled turn's call nobody answered for", async () => {
    expect(await lookupIn()).toMatchObject({ grantId: 'g1' });
  });

  it('does not cover a call the grantor led to with their answer, under a rule that forbids self-approval', async () => {
    expect(await lookupIn(['UBOB'])).toBeUndefined();
    expect(await lookupIn(['UALICE'])).toMatchObject({ grantId: 'g1' });
  });
});

describe("a grant whose rule's approvers are the channel's people", () => {
  const CHANNEL_RULE = policyOf('    - { tools: [restart], approvers: [channel] }\n');
  const NAMED_RULE = policyOf('    - { tools: [restart], approvers: [UBOB] }\n');
  const lookupWith = ({ policy, channels, grantId }: { policy: PolicyConfig; channels: ReadonlySet<string> | undefined; grantId?: string }) => {
    const grant = grantUnder({ before: policy, namespace: 'prod' });
    const reads: Array<{ userId: string; fresh: boolean | undefined }> = [];
    const channelsOf = async (userId: string, options?: { fresh?: boolean }) => {
      reads.push({ userId, fresh: options?.fresh });
      return channels;
    };
    const lookup = createGrantLookup({ store: { listGrants: async () => [grant] } as never, resolveGroups: async () => new Map(), channelsOf, now: () => Date.now() });
    const evaluation = evaluatePolicy({ policy, toolName: 'restart', channel: 'C1', input: { namespace: 'prod' } });
    const found = lookup({ teamId: 'T1', channel: 'C1', threadTs: '1.1' } as never, 'UALICE')({ toolName: 'restart', input: { namespace: 'prod' }, evaluation, ...(grantId ? { grantId } : {}) });
    return { found, reads };
  };

  it('covers a call while its grantor is in the channel, asking Slack past the cache at the gate and not before the start', async () => {
    const gate = lookupWith({ policy: CHANNEL_RULE, channels: new Set(['C1']) });
    expect(await gate.found).toMatchObject({ grantId: 'g1' });
    expect(gate.reads).toEqual([{ userId: 'UBOB', fresh: true }]);
    const beforeStart = lookupWith({ policy: CHANNEL_RULE, channels: new Set(['C1']), grantId: 'g1' });
    expect(await beforeStart.found).toMatchObject({ grantId: 'g1' });
    expect(beforeStart.reads).toEqual([{ userId: 'UBOB', fresh: false }]);
  });

  it('covers nothing once its grantor left the channel, or when Slack cannot say which channels they are in', async () => {
    expect(await lookupWith({ policy: CHANNEL_RULE, channels: new Set(['C2']) }).found).toBeUndefined();
    expect(await lookupWith({ policy: CHANNEL_RULE, channels: undefined }).found).toBeUndefined();
  });

  it("reads no channels for a rule that names its approvers: the grantor's approval does not rest on the channel", async () => {
    const named = lookupWith({ policy: NAMED_RULE, channels: undefined });
    expect(await named.found).toMatchObject({ grantId: 'g1' });
    expect(named.reads).toEqual([]);
  });
});
