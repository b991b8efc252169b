import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import { OUTDATED_CARD_DRAWN_AFTER_MS } from '../../approvals/decide-call.js';
import { click, createTestDecider, storeStepInNewThread } from '../../approvals/decide-call.test-support.js';
import type { PendingStep } from '../../approvals/pending-step.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import { createMemoryStore } from '../../store/memory-store.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import type { OrganisationMembership } from '../organisation-membership.js';
import { registerApprovalActions } from './approval-actions.js';
import { cardClick, fakeBoltApp } from './bolt-listener.test-support.js';
import { registerDenyWithReason } from './deny-with-reason.js';
import { registerEditCall } from './edit-call.js';
import { registerGrantApproval } from './grant-approval.js';

const logger = pino({ level: 'silent' });

/**
 * 94786d3: "a click refused as already decided, closed or stale ... draws the step as stored: the
 * card heals at the first click". Only the Approve/Deny buttons' path (`CallDecider.record`) does.
 * The card's other buttons on the same stale card (Deny with reason…, Edit…, Approve & allow…, and
 * a question's Reply…) are refused by `registerCallModalButton` with the same codes
 * ('already-decided', 'closed', 'stale') and draw nothing: the card left "waiting" with live
 * buttons by a decider that stopped right after its write keeps them after such a click, however
 * long after the decision.
 */
describe('a modal button clicked on a card left waiting after its decision', () => {
  async function world({ afterMs = OUTDATED_CARD_DRAWN_AFTER_MS + 60_000 }: { afterMs?: number } = {}) {
    const store = createMemoryStore();
    const step = await storeStepInNewThread(store, 'scale');
    await store.setStepCard(step.stepId, 'card-1');
    const drawn = new Map<string, PendingStep>();
    const ephemerals: string[] = [];
    const messenger = {
      async updateStepCard({ step: shown }: { step: PendingStep & { cardTs: string } }) {
        drawn.set(shown.cardTs, shown);
      },
      async updateStepCopy() {},
      async postEphemeral({ text }: { text: string }) {
        ephemerals.push(text);
      },
    } as unknown as ThreadMessenger;
    let at = Date.now();
    const { decider } = createTestDecider({ store, messenger, now: () => at });
    // Alice's approval is recorded; her process stops before drawing it (no `publish`).
    const approved = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(approved.recorded).toBe(true);
    at += afterMs;
    const { app, action } = fakeBoltApp();
    const membership = { of: async () => 'member' } as unknown as OrganisationMembership;
    registerApprovalActions(app, { decider, messenger, organisationMembership: membership });
    const forms = { store, decider, messenger, logger, audit: createMemoryAuditLog({ logger }), channelsOf: async () => new Set([step.channel]), organisationMembership: membership };
    registerDenyWithReason(app, forms as never);
    registerEditCall(app, { ...forms, toolSchemas: { jsonSchema: async () => ({ type: 'object' }) } } as never);
    registerGrantApproval(app, forms as never);
    const press = async (actionId: string) => {
      const { args } = cardClick({ actionId, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, userId: 'U0ALICE', teamId: step.teamId, channel: step.channel });
      await action(actionId)(args);
    };
    return { store, step, drawn, ephemerals, press };
  }

  it('Approve (control): refused as already approved, and the card is drawn as stored', async () => {
    const { store, step, drawn, ephemerals, press } = await world();
    await press(APPROVAL_ACTION_IDS.approve);
    expect(ephemerals).toEqual([expect.stringContaining('Already approved')]);
    expect(drawn.get('card-1')?.phase).toBe((await store.getStep(step.stepId))!.phase);
  });

  it('Deny with reason…: refused as already decided, and the card is drawn as stored too', async () => {
    const { store, step, drawn, ephemerals, press } = await world();
    await press(APPROVAL_ACTION_IDS.denyWithReason);
    expect(ephemerals).toEqual([expect.stringContaining('already decided')]);
    expect(drawn.get('card-1')?.phase).toBe((await store.getStep(step.stepId))!.phase);
  });

  it.each([
    ['Edit…', APPROVAL_ACTION_IDS.edit],
    ['Approve & allow…', APPROVAL_ACTION_IDS.grant],
  ])('%s: refused as already decided, and the card is drawn as stored too', async (_label, actionId) => {
    const { store, step, drawn, ephemerals, press } = await world();
    await press(actionId);
    expect(ephemerals).toEqual([expect.stringContaining('already decided')]);
    expect(drawn.get('card-1')?.phase).toBe((await store.getStep(step.stepId))!.phase);
  });

  it("Deny with reason… a moment after the decision (a double-click): refused, and the card left to the decision's own draw", async () => {
    const { drawn, ephemerals, press } = await world({ afterMs: 1_000 });
    await press(APPROVAL_ACTION_IDS.denyWithReason);
    expect(ephemerals).toEqual([expect.stringContaining('already decided')]);
    expect(drawn.size).toBe(0);
  });
});
