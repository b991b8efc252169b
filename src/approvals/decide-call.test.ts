import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { parseConfigFile } from '../config/config-file.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import type { WorkItem } from '../conversation/work-item.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createCallDecider } from './decide-call.js';
import type { PendingStep } from './pending-step.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';

const config = parseConfigFile(
  `
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      approvers: [U0ALICE, "group:S0ONCALL"]
      required: 2
    - name: prod scaling
      tools: [scale]
      approval: always
      approvers: [U0ALICE]
`,
  'test.yml',
);

function setup() {
  const store = createMemoryStore();
  const logger = pino({ level: 'silent' });
  const audit = createMemoryAuditLog({ logger });
  const submitted: WorkItem[] = [];
  const cards: unknown[] = [];
  const messenger = { updateCard: async (card: unknown) => void cards.push(card) } as unknown as ThreadMessenger;
  const decider = createCallDecider({
    store,
    messenger,
    worker: { submit: async (_threadKey: string, item: WorkItem) => void submitted.push(item), pickUp: async () => false, idle: async () => {} },
    logger,
    audit,
    resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0BOB'])]]),
    evaluateInput: async ({ call, input }) => evaluatePolicy({ policy: config.policy, toolName: (input as { tool?: string }).tool ?? call.toolName, channel: 'C1', input }),
  });
  return { store, audit, decider, submitted, cards };
}

async function pendingStep(store: ReturnType<typeof createMemoryStore>, toolName: string): Promise<PendingStep> {
  const step: PendingStep = {
    schemaVersion: 1,
    stepId: `step${toolName}`,
    threadKey: 'T1:C1:1.1',
    teamId: 'T1',
    channel: 'C1',
    threadTs: '1.1',
    requesterId: 'U0REQUESTER',
    createdAt: 1,
    cardTs: '2.2',
    calls: [
      {
        kind: 'approval',
        approvalId: 'apv1',
        toolCallId: 'call1',
        toolName,
        description: '',
        input: { namespace: 'staging' },
        policy: evaluatePolicy({ policy: config.policy, toolName, channel: 'C1', input: {} }),
      },
    ],
    decisions: {},
    phase: 'pending',
    revision: 0,
  };
  await store.createStep(step, 60_000);
  return step;
}

describe('deciding a call under an approver policy', () => {
  it('refuses someone the policy does not name, says who can approve, audits it and changes nothing', async () => {
    const { store, audit, decider, submitted } = setup();
    await pendingStep(store, 'scale');
    const outcome = await decider.record({ stepId: 'stepscale', approvalId: 'apv1', userId: 'U0MALLORY', outcome: 'approved' });
    expect(outcome).toEqual({ recorded: false, message: expect.stringContaining('Only <@U0ALICE> can approve this') });
    expect((await store.getStep('stepscale'))?.decisions).toEqual({});
    const events = await audit.read({ sinceMs: 0 });
    expect(events.map((event) => event.type)).toEqual(['unauthorized-attempt']);
    expect(submitted).toEqual([]);
    const deny = await decider.record({ stepId: 'stepscale', approvalId: 'apv1', userId: 'U0MALLORY', outcome: 'denied' });
    expect(deny.recorded).toBe(false);
  });

  it('needs two distinct approvers for a quorum of two, and resumes once when it is reached', async () => {
    const { store, decider, submitted, audit } = setup();
    await pendingStep(store, 'restart_service');
    const first = await decider.record({ stepId: 'steprestart_service', approvalId: 'apv1', userId: 'U0ALICE', outcome: 'approved' });
    expect(first).toMatchObject({ recorded: true, completedStep: false });
    if (first.recorded) await decider.publish(first);
    expect(submitted).toEqual([]);
    const twice = await decider.record({ stepId: 'steprestart_service', approvalId: 'apv1', userId: 'U0ALICE', outcome: 'approved' });
    expect(twice).toEqual({ recorded: false, message: expect.stringContaining('You already approved this') });
    const requester = await decider.record({ stepId: 'steprestart_service', approvalId: 'apv1', userId: 'U0REQUESTER', outcome: 'approved' });
    expect(requester.recorded).toBe(false);

    const second = await decider.record({ stepId: 'steprestart_service', approvalId: 'apv1', userId: 'U0BOB', outcome: 'approved' });
    expect(second).toMatchObject({ recorded: true, completedStep: true });
    if (second.recorded) await decider.publish(second);
    expect(submitted).toEqual([{ kind: 'resume', stepId: 'steprestart_service', channel: 'C1', threadTs: '1.1' }]);
    const decisions = (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision');
    expect(decisions.map((event) => (event.type === 'decision' ? event.quorum : undefined))).toEqual([
      { have: 1, need: 2 },
      { have: 2, need: 2 },
    ]);
  });

  it('does not run an edit that needs other approvers than the original call', async () => {
    const { store, decider, submitted } = setup();
    await pendingStep(store, 'scale');
    // The edited input falls under the restart rule here (two approvers from other people).
    const escalated = await decider.record({
      stepId: 'stepscale',
      approvalId: 'apv1',
      userId: 'U0ALICE',
      outcome: 'approved',
      edit: { input: { tool: 'restart_service' }, submittedInput: { tool: 'restart_service' } },
    });
    expect(escalated).toEqual({ recorded: false, message: expect.stringContaining('This edit raises the stakes') });
    expect(submitted).toEqual([]);
    const plain = await decider.record({
      stepId: 'stepscale',
      approvalId: 'apv1',
      userId: 'U0ALICE',
      outcome: 'approved',
      edit: { input: { namespace: 'prod' }, submittedInput: { namespace: 'prod' } },
    });
    expect(plain).toMatchObject({ recorded: true, completedStep: true });
  });
});

describe('showing decisions that race on one card', () => {
  it('leaves the card showing the final state, however many decisions land while one process is updating it', async () => {
    const store = createMemoryStore();
    const logger = pino({ level: 'silent' });
    const audit = createMemoryAuditLog({ logger });
    const calls = ['apv1', 'apv2', 'apv3', 'apv4'].map((approvalId) => ({ kind: 'approval' as const, approvalId, toolCallId: approvalId, toolName: 'restart_service', description: '', input: {} }));
    await store.createStep({ ...(await pendingStep(store, 'restart_service')), stepId: 'wide', calls }, 60_000);
    // While each of the first process's card updates is on its way, another process decides the next
    // call; the one that completes the step shows it at once, before the slow update lands.
    const approveElsewhere = async (approvalId: string, show = false) => {
      const outcome = await decider.record({ stepId: 'wide', approvalId, userId: `U0${approvalId.toUpperCase()}`, outcome: 'approved' });
      if (show && outcome.recorded) await decider.publish(outcome);
    };
    const duringNextUpdate = [() => approveElsewhere('apv2'), () => approveElsewhere('apv3'), () => approveElsewhere('apv4', true)];
    /** Approve buttons on the card after each update, in the order the updates landed. */
    const buttonsShown: number[] = [];
    const messenger = {
      updateCard: async ({ card }: { card: { blocks: unknown[] } }) => {
        await duringNextUpdate.shift()?.();
        buttonsShown.push(JSON.stringify(card.blocks).split('countersign_approve').length - 1);
      },
    } as unknown as ThreadMessenger;
    const worker = { submit: async () => {}, pickUp: async () => false, idle: async () => {} };
    const decider = createCallDecider({ store, messenger, worker, logger, audit, resolveGroups: async () => new Map() });

    const first = await decider.record({ stepId: 'wide', approvalId: 'apv1', userId: 'U0FIRST', outcome: 'approved' });
    if (!first.recorded) throw new Error('the first decision was not recorded');
    await decider.publish(first);
    expect(buttonsShown.at(-1)).toBe(0);
  });
});
