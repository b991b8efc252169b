import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import type { Grant } from '../approvals/grant.js';
import { defaultConfig } from '../config/config-file.js';
import { createGrantLookup } from '../conversation/grant-lookup.js';
import type { ToolContext, ToolDefinition } from '../tools/tool-definition.js';
import { GrantNoLongerHoldsError } from './revoked-grant.js';
import { runTurn } from './run-turn.js';
import type { ExecutionReport, StartingCall } from './tool-set.js';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
const callReply = { content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'restart', input: JSON.stringify({ namespace: 'staging' }) }], finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' }, usage, warnings: [] };
const textReply = { content: [{ type: 'text' as const, text: 'done' }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] };
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };
const policy = defaultConfig().policy;
const notRunText = 'Not run: the grant g1 for restart was revoked or has expired; ask for approval again.';

/**
 * A real gate and grant lookup over a stand-in store holding one channel grant (as "Approve &
 * allow…" under the default policy records it) that covers `restart` for staging.
 */
function grantedTurn(options: { clock: { now: number }; run?: (context: ToolContext) => Promise<void>; beforeExecute?: (call: StartingCall) => Promise<void>; onGateLetThrough?: () => void }) {
  const grants: Grant[] = [];
  // The grant reads and lease checks, in order, and the start (a tool's own `run` may check before it).
  const checks: string[] = [];
  const store = {
    listGrants: async ({ hideEndedBy }: { hideEndedBy?: number }) => {
      checks.push('grant');
      return grants.filter((grant) => hideEndedBy === undefined || grant.expiresAt > hideEndedBy);
    },
  };
  const evaluation = { rule: undefined, needsApproval: true, ...policy.defaults } as never;
  grants.push({ grantId: 'g1', teamId: 'T1', channel: 'C1', scope: 'channel', toolName: 'restart', identicalArgumentsOnly: false, input: { namespace: 'staging' }, evaluation, grantedBy: 'UBOB', createdAt: options.clock.now, expiresAt: options.clock.now + 3_600_000 });
  const executed: unknown[] = [];
  const started: string[] = [];
  const reports: ExecutionReport[] = [];
  const used: string[] = [];
  const prompts: LanguageModelV4CallOptions['prompt'][] = [];
  const definitions: ToolDefinition[] = [
    {
      name: 'restart',
      description: 'r',
      inputSchema: z.object({ namespace: z.string() }),
      approval: 'always',
      execute: async (input, toolContext) => {
        await options.run?.(toolContext);
        checks.push('start');
        executed.push(input);
        return 'ok';
      },
    },
  ];
  const replies = [callReply, textReply];
  const lookup = createGrantLookup({ store: store as never, resolveGroups: async () => new Map(), channelsOf: async () => new Set(['C1']), now: () => options.clock.now });
  const findGrant = lookup({ teamId: 'T1', channel: 'C1', threadTs: '1.1' } as never, 'UALICE');
  const messages: ModelMessage[] = [{ role: 'user', content: 'restart staging' }];
  const turn = runTurn({
    model: mockStreamingModel(async (call) => {
      prompts.push(call.prompt);
      const reply = replies.shift();
      if (!reply) throw new Error('no reply scripted');
      return reply;
    }),
    instructions: 'test',
    definitions,
    policy,
    messages,
    context,
    maxSteps: 5,
    findGrant: async (call) => {
      const grant = await findGrant(call);
      // The gate's lookup (the checks before the start name the grant).
      if (grant && call.grantId === undefined) options.onGateLetThrough?.();
      return grant;
    },
    // Told once the tool was invoked: a call that never starts is not said to have run without a card.
    onAutomaticApproval: (approval) => {
      used.push(approval.grant?.grantId ?? '');
    },
    beforeExecute: async (call) => {
      checks.push('marker');
      started.push(`${call.toolCallId}:${call.automatic?.grant?.grantId}`);
      await options.beforeExecute?.(call);
    },
    afterExecute: (report) => {
      reports.push(report);
    },
    assertHeld: async () => {
      checks.push('lease');
    },
  });
  const modelToldAfterCall = () => JSON.stringify(prompts[1] ?? []);
  return { turn, grants, executed, started, reports, used, checks, modelToldAfterCall };
}

describe('a call let through on a grant that is revoked or expires before it starts', () => {
  it('is not run when Revoke lands while its executing marker is written; the model is told and answers', async () => {
    const clock = { now: Date.now() };
    const turn = grantedTurn({
      clock,
      // Carol clicks Revoke ("it will ask for approval again") while the call waits to start.
      beforeExecute: async () => {
        turn.grants.length = 0;
      },
    });
    const outcome = await turn.turn;
    expect(turn.started).toEqual(['c1:g1']);
    // The check after the marker refused it: it did not run, so nothing says it ran without a card.
    expect(turn.used).toEqual([]);
    expect(turn.executed).toEqual([]);
    expect(turn.modelToldAfterCall()).toContain(notRunText);
    expect(turn.reports).toEqual([expect.objectContaining({ toolCallId: 'c1', status: 'error', error: notRunText })]);
    expect(outcome.text).toBe('done');
  });

  it('is not run when the write of its executing marker finds the grant gone (Revoke after the last lookup)', async () => {
    const clock = { now: Date.now() };
    const turn = grantedTurn({
      clock,
      // The store's marker write checks the grant in the same script and refuses: markStarted throws this.
      beforeExecute: async (call) => {
        throw new GrantNoLongerHoldsError({ grantId: 'g1', toolName: call.toolName });
      },
    });
    const outcome = await turn.turn;
    expect(turn.used).toEqual([]);
    expect(turn.executed).toEqual([]);
    expect(turn.modelToldAfterCall()).toContain(notRunText);
    expect(turn.reports).toEqual([expect.objectContaining({ toolCallId: 'c1', status: 'error', error: notRunText })]);
    expect(outcome.text).toBe('done');
  });

  it('is not run, and no tool-started is written, when the grant expires between the gate and the start', async () => {
    const clock = { now: Date.now() };
    const turn = grantedTurn({
      clock,
      onGateLetThrough: () => {
        clock.now += 3_600_000;
      },
    });
    await turn.turn;
    expect(turn.used).toEqual([]);
    expect(turn.started).toEqual([]);
    expect(turn.executed).toEqual([]);
    expect(turn.modelToldAfterCall()).toContain(notRunText);
  });

  it('is not run when a command that waited for a slot checks before it spawns (ToolContext.assertHeld)', async () => {
    const clock = { now: Date.now() };
    const turn = grantedTurn({
      clock,
      // As withCommandSlots does: the slot wait (during which Revoke lands), then beforeStart = assertHeld.
      run: async (toolContext) => {
        turn.grants.length = 0;
        await toolContext.assertHeld?.();
      },
    });
    await turn.turn;
    expect(turn.started).toEqual(['c1:g1']);
    expect(turn.used).toEqual([]);
    expect(turn.executed).toEqual([]);
    expect(turn.modelToldAfterCall()).toContain(notRunText);
    expect(turn.reports).toEqual([expect.objectContaining({ status: 'error', error: notRunText })]);
  });

  it('checks the lease after the grant, last before the start, after the marker and after a command slot', async () => {
    // The grant's check reads Redis: a process stalled on that read may have lost the thread by the time it returns.
    const clock = { now: Date.now() };
    const turn = grantedTurn({ clock, run: async (toolContext) => toolContext.assertHeld?.() });
    await turn.turn;
    expect(turn.checks).toEqual(['grant', 'grant', 'marker', 'grant', 'lease', 'grant', 'lease', 'start']);
  });

  it('still runs while the grant stands', async () => {
    const clock = { now: Date.now() };
    const turn = grantedTurn({ clock, run: async (toolContext) => toolContext.assertHeld?.() });
    await turn.turn;
    expect(turn.executed).toEqual([{ namespace: 'staging' }]);
    expect(turn.used).toEqual(['g1']);
    expect(turn.reports).toEqual([expect.objectContaining({ status: 'ok' })]);
  });
});
