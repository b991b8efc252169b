import { describe, expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { OUTDATED_CARD_DRAWN_AFTER_MS } from './decide-call.js';
import { click, createTestDecider, storeStepInNewThread } from './decide-call.test-support.js';
import type { PendingStep } from './pending-step.js';

/**
 * 94786d3/c830cd5 for a quorum rule (restart_service: two approvers). Alice's approval is counted
 * ("1 of 2") and her process stops before drawing it (the after-decision crash: no `publish`). No
 * resume is queued (the step still waits), so no takeover draws it either: the card keeps showing
 * "0 of 2". Her second click on the card, which still offers her Approve, is refused as
 * 'already-approved' ("You already approved this; it needs 1 more approver"), not among
 * OUTDATED_CARD_REFUSALS, so it draws nothing, however long after: the card keeps saying nobody
 * approved until someone else acts.
 */
describe('a quorum card whose first approval was recorded but never drawn', () => {
  it("is drawn ('1 of 2') by the approver's next click on it, as an outdated card is", async () => {
    const store = createMemoryStore();
    const step = await storeStepInNewThread(store, 'restart_service');
    await store.setStepCard(step.stepId, 'card-1');
    const shown = new Map<string, PendingStep>();
    const messenger = {
      async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
        shown.set(drawn.cardTs, drawn);
      },
      async updateStepCopy() {},
    } as unknown as ThreadMessenger;
    let at = Date.now();
    const { decider } = createTestDecider({ store, messenger, now: () => at });

    const approved = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(approved).toMatchObject({ recorded: true, completedStep: false, effect: { kind: 'counted' } });
    // Her process stops here: nothing drawn.
    expect(shown.size).toBe(0);

    at += OUTDATED_CARD_DRAWN_AFTER_MS + 60_000;
    const again = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(again).toMatchObject({ recorded: false, message: expect.stringContaining('You already approved this') });
    await decider.publish(again);
    const stored = (await store.getStep(step.stepId))!;
    expect(shown.get('card-1')?.approvals).toEqual(stored.approvals);
  });

  it('is not drawn again by a double-click: the approval drew it a moment ago (OUTDATED_CARD_DRAWN_AFTER_MS)', async () => {
    const store = createMemoryStore();
    const step = await storeStepInNewThread(store, 'restart_service');
    await store.setStepCard(step.stepId, 'card-1');
    let updates = 0;
    const messenger = {
      async updateStepCard() {
        updates += 1;
      },
      async updateStepCopy() {},
    } as unknown as ThreadMessenger;
    let at = Date.now();
    const { decider } = createTestDecider({ store, messenger, now: () => at });
    await decider.publish(await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 })));
    const drawnByApproval = updates;
    expect(drawnByApproval).toBeGreaterThan(0);

    at += 1_000;
    const again = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(again).toMatchObject({ recorded: false, message: expect.stringContaining('You already approved this') });
    await decider.publish(again);
    expect(updates).toBe(drawnByApproval);
  });
});
