import { describe, expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { OUTDATED_CARD_DRAWN_AFTER_MS } from './decide-call.js';
import { click, createTestDecider, storeStepInNewThread } from './decide-call.test-support.js';
import type { PendingStep } from './pending-step.js';

/**
 * The process that records a decision draws it only after its write, which also queues the resume:
 * stopped in between (the after-decision crash, an OOM kill), it leaves the card "waiting" with live
 * Approve/Deny buttons while another process runs the call. A click on those buttons is refused (the
 * call is decided); it must also draw the card as the step stands, or it keeps its buttons for good.
 */
describe('a click on a card that shows an older state than its step', () => {
  it('draws the step as stored when the call was already decided', async () => {
    const store = createMemoryStore();
    const step = await storeStepInNewThread(store, 'scale');
    await store.setStepCard(step.stepId, 'card-1');
    const shown = new Map<string, PendingStep>();
    const messenger = {
      async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
        shown.set(drawn.cardTs, drawn);
      },
    } as unknown as ThreadMessenger;
    let at = Date.now();
    const { decider } = createTestDecider({ store, messenger, now: () => at });

    // Alice's approval is recorded, and its process stops before drawing it (no `publish`).
    const approved = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(approved.recorded).toBe(true);
    expect(shown.size).toBe(0);

    // Later, she clicks Approve again on the card still offering it: refused, and the card shows the decision.
    at += OUTDATED_CARD_DRAWN_AFTER_MS;
    const again = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(again).toMatchObject({ recorded: false, message: expect.stringContaining('Already approved') });
    await decider.publish(again);
    const stored = (await store.getStep(step.stepId))!;
    expect(shown.get('card-1')).toMatchObject({ phase: stored.phase, revision: stored.revision, decisions: stored.decisions });
  });

  it('draws nothing for a second click right after the first (a double-click): the first click draws it', async () => {
    const store = createMemoryStore();
    const step = await storeStepInNewThread(store, 'scale');
    await store.setStepCard(step.stepId, 'card-1');
    let draws = 0;
    const messenger = {
      async updateStepCard() {
        draws += 1;
      },
    } as unknown as ThreadMessenger;
    const at = Date.now();
    const { decider } = createTestDecider({ store, messenger, now: () => at });

    const approved = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(approved.recorded).toBe(true);
    // Her second click comes while the first click's draw is still on its way.
    const again = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(again).toMatchObject({ recorded: false, message: expect.stringContaining('Already approved') });
    await decider.publish(again);
    expect(draws).toBe(0);
  });

  it('draws nothing for a click its card rightly refused (not a member of the channel)', async () => {
    const store = createMemoryStore();
    const step = await storeStepInNewThread(store, 'scale');
    await store.setStepCard(step.stepId, 'card-1');
    let draws = 0;
    const messenger = {
      async updateStepCard() {
        draws += 1;
      },
    } as unknown as ThreadMessenger;
    const { decider } = createTestDecider({ store, messenger });
    const outsider = { ...click(step, 'U0EVE', { kind: 'approve', version: 0 }), origin: { teamId: step.teamId, channel: step.channel, membership: 'external' as const } };
    const refused = await decider.record(outsider);
    expect(refused.recorded).toBe(false);
    await decider.publish(refused);
    expect(draws).toBe(0);
  });
});
