import { describe, expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { click, createTestDecider, storeStepInNewThread } from './decide-call.test-support.js';
import type { InputVersion, PendingCall, PendingStep } from './pending-step.js';

/**
 * The decision's draw reads the step again only when something newer may be drawn or recorded
 * while it is on its way (`mayChangeUnseen`): the usual click, which completes the step, draws once
 * and costs its resumed turn no Redis round trip before it starts.
 */
describe("a decision's draw", () => {
  async function publishApproval(options: { routedTo?: string; threadBusy?: boolean }) {
    const memory = createMemoryStore();
    let reads = 0;
    let counting = false;
    const store: StateStore = {
      ...memory,
      getStep: async (stepId) => {
        if (counting) reads += 1;
        return memory.getStep(stepId);
      },
    };
    const stored = await storeStepInNewThread(memory, 'scale');
    if (options.routedTo) {
      // The call's rule sends it to another channel too, where its copy is not posted yet.
      const call = stored.calls[0]! as PendingCall & { versions: InputVersion[] };
      const policy = { ...call.policy!, notify: { thread: true, channels: [options.routedTo], dmApprovers: false } };
      const routed = { ...call, policy, versions: call.versions.map((version) => ({ ...version, policy })) };
      expect(await memory.commitStep({ fromRevision: stored.revision, step: { ...stored, calls: [routed] }, audit: [] })).toEqual({ result: 'committed' });
    }
    await memory.setStepCard(stored.stepId, 'card-1');
    const step = (await memory.getStep(stored.stepId))!;
    // Another item holds the thread: the resume the decision queues runs there, not here.
    if (options.threadBusy) await memory.tryLock(step.threadKey, 60_000);
    const drawn: PendingStep[] = [];
    const messenger = {
      async updateStepCard({ step: shown }: { step: PendingStep }) {
        drawn.push(shown);
      },
    } as unknown as ThreadMessenger;
    const { decider, submitted } = createTestDecider({ store, messenger });
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(outcome).toMatchObject({ recorded: true, completedStep: true });
    counting = true;
    await decider.publish(outcome);
    return { reads, draws: drawn.length, resumedHere: submitted.length === 1 };
  }

  it('completing the step and resuming it here: drawn once, not read again', async () => {
    expect(await publishApproval({})).toEqual({ reads: 0, draws: 1, resumedHere: true });
  });

  it('read again when a copy its routing asks for may be recorded meanwhile', async () => {
    expect(await publishApproval({ routedTo: 'C0APPROVALS' })).toEqual({ reads: 1, draws: 1, resumedHere: true });
  });

  it('not read again either when another holder runs the resume: its claim has the sweep draw what it changes (`sweepShowsLater`)', async () => {
    expect(await publishApproval({ threadBusy: true })).toEqual({ reads: 0, draws: 1, resumedHere: false });
  });
});
