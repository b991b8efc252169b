import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mockStreamingModel } from '../helpers/mock-streaming-model.js';
import { runTurn } from '../../src/agent/run-turn.js';
import type { Grant } from '../../src/approvals/grant.js';
import { evaluatePolicy } from '../../src/approvals/policy/evaluate-policy.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import { createUsergroupMembers } from '../../src/slack/usergroup-members.js';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { createGrantLookup } from '../../src/conversation/grant-lookup.js';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
const textReply = { content: [{ type: 'text' as const, text: 'done' }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] };
const callReply = (id: string) => ({
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName: 'restart', input: JSON.stringify({ namespace: 'prod' }) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});

const policy = parseConfigFile('policy:\n  rules:\n    - { name: restarts, tools: [restart], approvers: ["group:S0SRE"] }\n', 'countersign.yml').policy;

/**
 * README (Approval policy): "someone removed from the group before the turn resumes has their approval
 * revoked and the call does not run" — "The check at resume is the one that counts: it reads every group
 * fresh from Slack". A grant is "one person's approval carried forward, so it is never wider than that
 * approval could be now" (grant.ts). The grant check (gate and pre-start) reads groups from the 5-minute
 * per-process cache; a worker gets no `subteam_members_changed` event (receivers do), so nothing empties it.
 */
/** Bob's channel grant for restarts under a rule `@sre` approves, with the real gate and group reader; `list` is Slack's `usergroups.users.list`. */
function grantFromBob(list: () => Promise<{ ok: boolean; users: string[] }>) {
  const calls: string[] = [];
  const client = { usergroups: { users: { list: async () => { calls.push('S0SRE'); return list(); } } } };
  const resolveGroups = createUsergroupMembers({ client: client as never, logger: pino({ level: 'silent' }) });
  const evaluation = evaluatePolicy({ policy, toolName: 'restart', channel: 'C1', input: { namespace: 'prod' } });
  const now = Date.now();
  const grant: Grant = { grantId: 'g1', teamId: 'T1', channel: 'C1', scope: 'channel', toolName: 'restart', identicalArgumentsOnly: false, input: { namespace: 'prod' }, evaluation, grantedBy: 'UBOB', createdAt: now, expiresAt: now + 3_600_000 };
  const lookup = createGrantLookup({ store: { listGrants: async () => [grant] } as never, resolveGroups, channelsOf: async () => new Set(['C1']), now: () => Date.now() });
  const executed: string[] = [];
  const definitions: ToolDefinition[] = [{ name: 'restart', description: 'r', inputSchema: z.object({ namespace: z.string() }), approval: 'always', execute: async () => executed.push('run') && 'ok' }];
  const turn = (id: string) =>
    runTurn({
      model: mockStreamingModel([callReply(id), textReply]),
      instructions: 'test',
      definitions,
      policy,
      messages: [{ role: 'user', content: 'restart prod' }],
      context: { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' },
      maxSteps: 5,
      findGrant: lookup({ teamId: 'T1', channel: 'C1', threadTs: '1.1' } as never, 'UALICE'),
      assertHeld: async () => {},
    });
  return { turn, executed, calls };
}

describe('a grant from someone who has left the approving group', () => {
  it('no longer lets calls run (the grant check must not go by a cached member list)', async () => {
    let sre = ['UBOB'];
    const { turn, executed } = grantFromBob(async () => ({ ok: true, users: [...sre] }));

    // While Bob is in @sre his grant covers Alice's restart (this also fills the worker's cache).
    const before = await turn('c1');
    expect(before.approvalRequests).toEqual([]);
    expect(executed).toEqual(['run']);

    // Bob leaves @sre. Slack now says so; this worker process receives no Slack event about it.
    sre = [];
    const after = await turn('c2');
    // A card asks again (as an approval by Bob would be revoked at resume), rather than running on the cached list.
    expect(executed).toEqual(['run']);
    expect(after.approvalRequests.map((request) => request.toolName)).toEqual(['restart']);
  });

  it('asks with a card when Slack does not answer who is in the group (a rate limit), though the cache says Bob is', async () => {
    let answering = true;
    const { turn, executed } = grantFromBob(async () => {
      if (!answering) throw new Error('slack_webapi_rate_limited');
      return { ok: true, users: ['UBOB'] };
    });
    expect((await turn('c1')).approvalRequests).toEqual([]);
    answering = false;
    const after = await turn('c2');
    expect(executed).toEqual(['run']);
    expect(after.approvalRequests.map((request) => request.toolName)).toEqual(['restart']);
  });

  it('costs one Slack read per call it lets through: the checks before the start go by what the gate just read', async () => {
    const { turn, executed, calls } = grantFromBob(async () => ({ ok: true, users: ['UBOB'] }));
    await turn('c1');
    await turn('c2');
    expect(executed).toEqual(['run', 'run']);
    expect(calls).toEqual(['S0SRE', 'S0SRE']);
  });
});

describe('the grant lookup', () => {
  it('reads no group when no grant in the channel is for the tool called', async () => {
    const evaluation = evaluatePolicy({ policy, toolName: 'restart', channel: 'C1', input: { namespace: 'prod' } });
    const now = Date.now();
    const other: Grant = { grantId: 'g2', teamId: 'T1', channel: 'C1', scope: 'channel', toolName: 'deploy', identicalArgumentsOnly: false, evaluation, grantedBy: 'UBOB', createdAt: now, expiresAt: now + 3_600_000 };
    const reads: unknown[] = [];
    const lookup = createGrantLookup({ store: { listGrants: async () => [other] } as never, resolveGroups: async (...args) => { reads.push(args); return new Map(); }, channelsOf: async () => new Set(['C1']), now: () => Date.now() });
    expect(await lookup({ teamId: 'T1', channel: 'C1', threadTs: '1.1' } as never, 'UALICE')({ toolName: 'restart', input: { namespace: 'prod' }, evaluation })).toBeUndefined();
    expect(reads).toEqual([]);
  });
});
