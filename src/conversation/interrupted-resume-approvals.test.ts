import type { ModelMessage } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { COUNTERSIGN_ACTOR, resumeToolMessage } from '../agent/decision-messages.js';
import { INTERRUPTED_CALL } from '../agent/interrupted-calls.js';
import type { ApprovedRun } from '../agent/tool-set.js';
import { inputHash } from '../approvals/input-version.js';
import { evaluation, makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { parseConfigFile } from '../config/config-file.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { createCloseInterruptedCalls } from './close-interrupted-calls.js';
import type { Lease } from './lease.js';
import { createStepResumer } from './resume-step.js';
import { createRetryFailedTurn } from './retry-failed-turn.js';
import { createTurnScope, type TurnScope } from './turn-scope.js';

const TTL = 86_400_000;
const SRE = evaluation({ approvers: [{ kind: 'group', groupId: 'S0SRE' }] });
const WORKER = { service: 'worker', namespace: 'prod' };
const API = { service: 'api', namespace: 'prod' };
const RESTART: ToolDefinition = { name: 'restart_service', description: 'Restart a service', inputSchema: z.object({ service: z.string(), namespace: z.string() }), approval: 'always', execute: async () => ({ ok: true }) };
const approvedBy = (input: unknown, approvers: string[]) => ({ outcome: 'approved' as const, userId: approvers.at(-1)!, at: Date.now(), version: 0, inputHash: inputHash(input), approvedBy: approvers });

/** The config a deploy brought in: restarts need `required` approvals from @sre. */
function policyRequiring(required: number) {
  const yaml = `policy:\n  rules:\n    - name: restarts\n      tools: [restart_service]\n      approval: always\n      approvers: ["group:S0SRE"]\n      required: ${required}\n`;
  return parseConfigFile(yaml, 'deploy.yml').policy;
}

/**
 * Bob alone approved restarting the worker, Bob and Carol the api (each under a rule of one @sre
 * approval); a process claimed the resume, recorded the decisions in the history and stopped
 * before either call started. The next process, started with `required` approvals in force,
 * takes the resume item over.
 */
async function interruptedResume({ required = 1, groupsReadable = true, toolRemoved = false } = {}) {
  const logger = pino({ level: 'silent' });
  const audit = createMemoryAuditLog({ logger });
  const store = createMemoryStore({ audit });
  const groups = { readable: groupsReadable };
  const claimed = makeStep(
    [
      { approvalId: 'a1', input: WORKER, policy: SRE },
      { approvalId: 'a2', input: API, policy: SRE },
    ],
    { phase: 'resumed', resumedBy: 'the stopped process', cardTs: '1700000000.000200' },
  );
  const step: PendingStep = { ...claimed, decisions: { a1: approvedBy(WORKER, ['U0BOB']), a2: approvedBy(API, ['U0BOB', 'U0CAROL']) } };
  const asked: ModelMessage = {
    role: 'assistant',
    content: [
      ...step.calls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.toolCallId, toolName: call.toolName, input: call.input })),
      ...step.calls.map((call) => ({ type: 'tool-approval-request' as const, approvalId: call.approvalId, toolCallId: call.toolCallId })),
    ],
  };
  const thread: ThreadState = { ...newThreadState(step, Date.now()), messages: [{ role: 'user', content: 'restart the worker and the api in prod' }, asked, resumeToolMessage(step)] };
  const token = (await store.tryLock(step.threadKey, TTL))!;
  const fence = { threadKey: step.threadKey, token };
  await store.createStep({ step, thread, ttlMs: TTL, audit: [], fence });

  const notices: Array<{ text: string; retryButton?: boolean }> = [];
  const cards: PendingStep[] = [];
  const messenger = {
    postNotice: async ({ text, retryButton }: { text: string; retryButton?: boolean }) => void notices.push({ text, ...(retryButton ? { retryButton } : {}) }),
    updateStepCard: async ({ step: shown }: { step: PendingStep }) => void cards.push(shown),
    postEphemeral: async () => {},
  } as unknown as TurnScope['messenger'];
  const lease: Lease = { fence, signal: new AbortController().signal, assertCurrent: async () => {}, assertHeld: async () => {}, guard: (write) => write(), lost: () => false, stateLost: () => false };
  const scope = createTurnScope({ store, messenger, lease, limits: { historyTtlMs: TTL, maxMessages: 500, maxBytes: 10_000_000 }, now: Date.now, takeBacks: { takeBack: async () => {} } });

  const turns: Array<{ messages: ModelMessage[]; runs: string[] }> = [];
  const phases = {
    store,
    audit,
    logger,
    now: Date.now,
    policy: policyRequiring(required),
    tools: toolRemoved ? [] : [RESTART],
    resolveGroups: async (groupIds: readonly string[]) => new Map(groups.readable ? groupIds.map((id) => [id, new Set(['U0BOB', 'U0CAROL'])] as const) : []),
    loadThread: async () => (await store.getThread(step.threadKey))!,
    runAndPublish: async (_scope: TurnScope, running: ThreadState, _requesterId: string, runs?: ReadonlyMap<string, ApprovedRun>) => {
      turns.push({ messages: structuredClone(running.messages), runs: [...(runs ?? new Map()).keys()] });
    },
    closeInterruptedCalls: createCloseInterruptedCalls({ store, logger }),
    cards: { postUnpostedCard: async () => false },
  };
  const resumer = createStepResumer(phases);
  const retry = createRetryFailedTurn({ ...phases, resumer });
  const refusals = async () => (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'action-refused');
  return {
    step,
    store,
    groups,
    turns,
    notices,
    cards,
    refusals,
    markStarted: (toolCallId: string, input: unknown) => store.markExecuting({ fence, toolCallId, marker: { toolName: 'restart_service', input, startedAt: Date.now() }, ttlMs: TTL, audit: [] }),
    recover: async () => {
      await resumer.resume(scope, step.stepId);
      await scope.flush();
    },
    tryAgain: async () => {
      const failureId = (await store.getThread(step.threadKey))!.failedTurn!.id;
      await retry(scope, { kind: 'retry', failureId, clickedBy: step.requesterId, teamId: step.teamId, channel: step.channel, threadTs: step.threadTs });
      await scope.flush();
    },
  };
}

/** What the model reads for each approval in the last message of a history. */
function approvalsOf(messages: readonly ModelMessage[]): Record<string, string | true> {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return {};
  return Object.fromEntries(last.content.flatMap((part) => (part.type === 'tool-approval-response' ? [[part.approvalId, part.approved ? true : (part.reason ?? '')]] : [])));
}

describe('recovering a resume whose process stopped after its claim', () => {
  it('runs only what still holds under the config in force, and answers, shows and audits what no longer does as not run', async () => {
    // The deploy raised the rule to two approvals: Bob's alone on the worker no longer holds.
    const resume = await interruptedResume({ required: 2 });
    await resume.recover();

    expect(resume.turns.map((turn) => turn.runs)).toEqual([['call_1']]);
    const told = approvalsOf(resume.turns[0]!.messages);
    expect(told).toEqual({ a1: expect.stringMatching(/^Not run: it has fewer approvals than the rule requires .*This was an error, not a decision/), a2: true });
    const stored = (await resume.store.getStep(resume.step.stepId))!;
    expect({ phase: stored.phase, a1: stored.decisions.a1, a2: stored.decisions.a2?.outcome }).toEqual({ phase: 'resumed', a1: expect.objectContaining({ outcome: 'denied', userId: COUNTERSIGN_ACTOR }), a2: 'approved' });
    expect(approvalsOf((await resume.store.getThread(resume.step.threadKey))!.messages)).toEqual(told);
    expect(resume.cards.map((card) => card.decisions.a1?.outcome)).toEqual(['denied']);
    expect(await resume.refusals()).toEqual([expect.objectContaining({ approvalId: 'a1', userId: 'U0BOB', action: 'resume', code: 'approval-revoked' })]);
  });

  it('closes the calls of a tool a deploy removed as the claim would have: not run, on the card and in the audit trail', async () => {
    const resume = await interruptedResume({ toolRemoved: true });
    await resume.recover();
    expect(resume.turns.map((turn) => turn.runs)).toEqual([[]]);
    expect(approvalsOf(resume.turns[0]!.messages)).toEqual({ a1: expect.stringMatching(/^Not run: `restart_service` is not available now/), a2: expect.stringMatching(/^Not run: `restart_service` is not available now/) });
    expect(resume.cards.map((card) => [card.decisions.a1?.outcome, card.decisions.a2?.outcome])).toEqual([['denied', 'denied']]);
    expect((await resume.refusals()).map((event) => 'code' in event && event.code)).toEqual(['tool-unavailable', 'tool-unavailable']);
  });

  it('runs every call as before when the approvals still hold, touching neither the step nor the card', async () => {
    const resume = await interruptedResume();
    await resume.recover();
    expect(resume.turns.map((turn) => turn.runs)).toEqual([['call_0', 'call_1']]);
    expect((await resume.store.getStep(resume.step.stepId))?.revision).toBe(0);
    expect({ cards: resume.cards, refusals: await resume.refusals() }).toEqual({ cards: [], refusals: [] });
  });

  it('does not judge a call that had started: it is reported interrupted and never runs again', async () => {
    const resume = await interruptedResume({ required: 2 });
    await resume.markStarted('call_0', WORKER);
    await resume.recover();
    expect(resume.turns.map((turn) => turn.runs)).toEqual([['call_1']]);
    const last = resume.turns[0]!.messages.at(-1);
    expect(last?.role === 'tool' && last.content.find((part) => part.type === 'tool-result' && part.toolCallId === 'call_0')).toMatchObject({ output: { value: INTERRUPTED_CALL } });
    expect(approvalsOf(resume.turns[0]!.messages)).toEqual({ a1: true, a2: true });
    expect(await resume.refusals()).toEqual([]);
  });

  it('runs nothing and denies nothing while Slack does not answer for the approving group: the turn is left for Try again, which runs it once the group is read', async () => {
    const resume = await interruptedResume({ groupsReadable: false });
    await resume.recover();
    expect(resume.turns).toEqual([]);
    expect(resume.notices).toEqual([{ text: expect.stringMatching(/could not check who is in the user group S0SRE .*nothing was run\. Click \*Try again\*/), retryButton: true }]);
    const stored = (await resume.store.getStep(resume.step.stepId))!;
    expect({ revision: stored.revision, outcomes: Object.values(stored.decisions).map((decision) => decision.outcome) }).toEqual({ revision: 0, outcomes: ['approved', 'approved'] });
    expect((await resume.store.getThread(resume.step.threadKey))?.failedTurn?.approvedCalls?.map((approval) => approval.toolCallId)).toEqual(['call_0', 'call_1']);
    expect(await resume.refusals()).toEqual([]);

    resume.groups.readable = true;
    await resume.tryAgain();
    expect(resume.turns.map((turn) => turn.runs)).toEqual([['call_0', 'call_1']]);
  });
});
