import { pino } from 'pino';
import { expect, it } from 'vitest';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { keepCardToRedraw } from './card-refreshes.js';
import { copyChannel, openStep, refreshesPostingCopies } from './card-refreshes.test-support.js';
import { click, createTestDecider } from './decide-call.test-support.js';
import type { CardCopy, PendingStep } from './pending-step.js';
import { evaluation, makeStep } from './pending-step.test-support.js';

const logger = pino({ level: 'silent' });
const APPROVALS = 'C0APPROVALS';

/**
 * A copy is recorded outside the step's revision ("posting a copy races no decision"). The process
 * that posts it (here a card refresh's copies hook; the turn's postCopies and an escalation hop do
 * the same) reads the step again once and draws it; a decision whose read came before the copy's
 * record but whose write lands after that re-read draws only the copies it read: the new copy keeps
 * "waiting" and live Approve/Deny buttons on a request already decided (and run), for good.
 */
it('a copy posted while a click is being judged shows the decision it missed', async () => {
  const store = createMemoryStore();
  const policy = evaluation({ approvers: [{ kind: 'group', groupId: 'S0ONCALL' }], notify: { thread: true, channels: [APPROVALS], dmApprovers: false } });
  const step: PendingStep = makeStep([{ approvalId: 'apv1', policy }], { createdAt: Date.now() });
  await openStep(store, step, 60 * 60_000);
  await store.setStepCard(step.stepId, 'card-1');
  // The copy in #approvals was not posted at first (a 503): a kept card refresh posts it.
  await keepCardToRedraw({ store, stepId: step.stepId, logger, at: Date.now() });

  // What each message shows last: the step's phase as drawn on it.
  const shown = new Map<string, string>();
  const messenger = {
    async updateStepCard({ step: drawn }: { step: PendingStep & { cardTs: string } }) {
      shown.set(drawn.cardTs, drawn.phase);
    },
    async updateStepCopy({ step: drawn, copy }: { step: PendingStep; copy: CardCopy }) {
      shown.set(copy.ts, drawn.phase);
    },
    async postStepCopy({ step: drawn, target }: { step: PendingStep; target: CardCopyTarget }) {
      shown.set('copy-1', drawn.phase);
      return { kind: target.kind, channel: copyChannel(target), ts: 'copy-1' };
    },
  } as unknown as ThreadMessenger;

  // The click's read of the on-call group (usergroups.users.list, cache cold) is slow.
  let groupsAsked!: () => void;
  const asked = new Promise<void>((resolve) => {
    groupsAsked = resolve;
  });
  let answerGroups!: () => void;
  const answered = new Promise<void>((resolve) => {
    answerGroups = resolve;
  });
  const { decider } = createTestDecider({
    store,
    messenger,
    evaluateInput: async ({ call }) => call.policy!,
    resolveGroups: async () => {
      groupsAsked();
      await answered;
      return new Map([['S0ONCALL', new Set(['U0BOB'])]]);
    },
  });
  const refreshes = refreshesPostingCopies({ store, messenger, takeBacks: { takeBack: async () => {} }, logger, failure: 'could not post copies' });

  // Bob approves on the thread's card: his click has read the step (no copy yet) and waits for the group.
  const recording = decider.record(click(step, 'U0BOB', { kind: 'approve', version: 0 }));
  await asked;
  // Meanwhile the sweep's refresh posts the #approvals copy, records it, and draws the step (still waiting).
  await refreshes.retryDue();
  expect((await store.getStep(step.stepId))?.copies?.map((copy) => copy.ts)).toEqual(['copy-1']);
  // The click is judged and written: the request is approved, the turn resumes and runs the call.
  answerGroups();
  const outcome = await recording;
  expect(outcome.recorded).toBe(true);
  await decider.publish(outcome);

  const final = (await store.getStep(step.stepId))!;
  expect(final.phase).not.toBe('pending');
  // Every message of the step shows it as it stands: the card and the copy.
  expect({ card: shown.get('card-1'), copy: shown.get('copy-1') }).toEqual({ card: final.phase, copy: final.phase });
});
