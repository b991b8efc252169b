import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfigFile } from '../config/config-file.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { definitionFingerprintOf } from '../tools/definition-fingerprint.js';
import { COUNTERSIGN_ACTOR, denialReason } from '../agent/decision-messages.js';
import { buildPendingStep, MAX_CALLS_PER_CARD } from './build-pending-step.js';
import { scheduleActor } from './schedule-actor.js';

const NOW = Date.UTC(2026, 10, 25, 12, 15);
const HOUR = 3_600_000;
const policy = parseConfigFile('policy:\n  defaults:\n    expiry: 2h\n  rules:\n    - tools: [restart_service]\n      expiry: 30m\n', 'countersign.yml').policy;
const question = { kind: 'question' as const, approvalId: 'q1', toolCallId: 'call_0', toolName: 'ask_user', input: { question: 'Which namespace?', options: ['staging', 'prod'] } };
const restart = { kind: 'approval' as const, approvalId: 'a1', toolCallId: 'call_1', toolName: 'restart_service', input: { service: 'worker' } };

function stepFor(requesterId: string, requests: Array<typeof question | typeof restart>) {
  return buildPendingStep({
    thread: newThreadState({ teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' }, NOW),
    requesterId,
    requests,
    policy,
    definitionOf: () => undefined,
    stepId: 'step1',
    now: NOW,
  });
}

describe('buildPendingStep: when a question stops waiting', () => {
  it("leaves a person's question open until they answer it (or send another message)", async () => {
    expect((await stepFor('U0ALICE', [question])).expiresAt).toBeUndefined();
  });

  it("gives a scheduled turn's question the policy's default expiry, since no person is bound to come back to it", async () => {
    expect((await stepFor(scheduleActor('heartbeat'), [question])).expiresAt).toBe(NOW + 2 * HOUR);
    // With an approval call, the step closes at the earlier deadline.
    expect((await stepFor(scheduleActor('heartbeat'), [question, restart])).expiresAt).toBe(NOW + HOUR / 2);
  });
});

describe('buildPendingStep: who steered the turn', () => {
  const build = (thread: ThreadState) =>
    buildPendingStep({ thread, requesterId: scheduleActor('heartbeat'), requests: [restart], policy, definitionOf: () => undefined, stepId: 'step1', now: NOW });
  const address = { teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' };

  it('records who answered the turn\'s questions before it asked for these calls, for the self-approval check', async () => {
    const thread = { ...newThreadState(address, NOW), instigatorIds: ['U0ALICE'] };
    expect((await build(thread)).instigatorIds).toEqual(['U0ALICE']);
  });

  it('records nobody when nobody answered', async () => {
    expect(await build(newThreadState(address, NOW))).not.toHaveProperty('instigatorIds');
  });
});

describe('buildPendingStep: what an approval is for', () => {
  const restartTool = {
    name: 'restart_service',
    description: 'Restart a deployment',
    inputSchema: z.object({ service: z.string() }),
    definitionFingerprint: 'rollout restart',
    execute: async () => 'ok',
  };

  it("records the tool's definition with each approval call, so a deploy that changes the tool is noticed when it would run", async () => {
    const step = await buildPendingStep({
      thread: newThreadState({ teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' }, NOW),
      requesterId: 'U0ALICE',
      requests: [question, restart],
      policy,
      definitionOf: (name) => (name === 'restart_service' ? restartTool : undefined),
      stepId: 'step1',
      now: NOW,
    });
    expect(step.calls.map((call) => call.definitionFingerprint)).toEqual([undefined, await definitionFingerprintOf(restartTool)]);
  });

  it('records none for a tool this process does not have', async () => {
    expect((await stepFor('U0ALICE', [restart])).calls[0]!.definitionFingerprint).toBeUndefined();
  });
});

describe('buildPendingStep: more calls than a card holds', () => {
  it('closes the calls past the limit as countersign, not as a person: the model hears an error it may ask again about', async () => {
    const requests = Array.from({ length: MAX_CALLS_PER_CARD + 2 }, (_, index) => ({ ...restart, approvalId: `a${index}`, toolCallId: `call_${index}` }));
    const step = await stepFor('U0ALICE', requests);
    expect(Object.keys(step.decisions)).toEqual(['a10', 'a11']);
    for (const decision of Object.values(step.decisions)) {
      expect(decision).toMatchObject({ outcome: 'denied', userId: COUNTERSIGN_ACTOR });
      expect(denialReason(decision)).toBe(
        `Not run: at most ${MAX_CALLS_PER_CARD} calls can wait for approval at once; ask for the rest separately. This was an error, not a decision: nobody declined this call, and nothing ran. Tell the user; if they ask for it again, request it again.`,
      );
    }
  });
});

describe('buildPendingStep: an input that may fall under rules nobody can satisfy at once', () => {
  const rules = (sre: string) =>
    parseConfigFile(
      `policy:\n  rules:\n    - { tools: [delete_pods], approvers: [${sre}] }\n    - { tools: [delete_pods], input: [{ field: namespaces, oneOf: [dev] }], approvers: [U0DEVLEAD] }\n`,
      'countersign.yml',
    ).policy;
  const remove = (approvalId: string, namespaces: string[]) => ({ kind: 'approval' as const, approvalId, toolCallId: `call_${approvalId}`, toolName: 'delete_pods', input: { namespaces, selector: 'app=api' } });
  const build = (sre: string, requests: Array<ReturnType<typeof remove>>) =>
    buildPendingStep({
      thread: newThreadState({ teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' }, NOW),
      requesterId: 'U0ALICE',
      requests,
      policy: rules(sre),
      definitionOf: () => undefined,
      stepId: 'step1',
      now: NOW,
    });

  it('closes such a call at once, as countersign, saying why and to split it; the step is complete when nothing else waits', async () => {
    const step = await build('U0SRE', [remove('a1', ['dev', 'prod'])]);
    expect(step.decisions.a1).toEqual({ outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: NOW, reason: expect.stringContaining('nobody can approve this input as it is') });
    expect(step.decisions.a1?.reason).toContain('separate calls');
    expect(step.phase).toBe('complete');
  });

  it('leaves the other calls of the step, and any call someone named by both rules can approve, waiting', async () => {
    const mixed = await build('U0SRE', [remove('a1', ['dev', 'prod']), remove('a2', ['dev'])]);
    expect(Object.keys(mixed.decisions)).toEqual(['a1']);
    expect(mixed.phase).toBe('pending');
    const shared = await build('U0SRE, U0DEVLEAD', [remove('a1', ['dev', 'prod'])]);
    expect(shared.decisions).toEqual({});
    // A group's members are not read here: the first click, which reads them, judges it.
    expect((await build('"group:S0SRE"', [remove('a1', ['dev', 'prod'])])).decisions).toEqual({});
  });
});
