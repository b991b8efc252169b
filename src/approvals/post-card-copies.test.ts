import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { MessagesToTakeBack } from '../conversation/message-take-back.js';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { postMissingCopies } from './post-card-copies.js';

const logger = pino({ level: 'silent' });
const APPROVALS = 'C0APPROVALS';

/** A step routed to #approvals, its card posted, and a messenger whose copies are `copy-1`, `copy-2`... */
async function routedStep() {
  const store = createMemoryStore();
  const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }], notify: { thread: true, channels: [APPROVALS], dmApprovers: false } }) }]);
  const token = (await store.tryLock(step.threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60 * 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
  await store.setStepCard(step.stepId, 'card-1');
  let posted = 0;
  const messenger = {
    async postStepCopy({ target }: { target: CardCopyTarget }) {
      posted += 1;
      return { kind: target.kind, channel: target.kind === 'channel' ? target.channel : `D-${target.userId}`, ts: `copy-${posted}` };
    },
  } as unknown as ThreadMessenger;
  const takenBack: MessagesToTakeBack[] = [];
  const takeBacks = { takeBack: async (messages: MessagesToTakeBack) => void takenBack.push(messages) };
  return { store, step, messenger, takeBacks, takenBack };
}

describe('a copy of the card whose record failed', () => {
  it('is taken back, counted nowhere', async () => {
    const { store, step, messenger, takeBacks, takenBack } = await routedStep();
    const failing: StateStore = { ...store, recordCardCopy: async () => Promise.reject(new Error('Connection is closed.')) };
    expect(await postMissingCopies({ store: failing, messenger, takeBacks, logger, step })).toBe(0);
    expect(takenBack).toEqual([{ channel: APPROVALS, ts: ['copy-1'], threadKey: step.threadKey, stepId: step.stepId }]);
    expect((await store.getStep(step.stepId))?.copies).toBeUndefined();
  });

  it('is logged once, as unrecorded, not also as a copy that could not be posted', async () => {
    const { store, step, messenger, takeBacks } = await routedStep();
    const events: string[] = [];
    const captured = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => done(void events.push((JSON.parse(String(chunk)) as { event: string }).event)) }));
    const failing: StateStore = { ...store, recordCardCopy: async () => Promise.reject(new Error('Connection is closed.')) };
    expect(await postMissingCopies({ store: failing, messenger, takeBacks, logger: captured, step })).toBe(0);
    expect(events).toEqual(['card-copy-unrecorded']);
  });

  it('is kept and counted when the record landed, its reply lost', async () => {
    const { store, step, messenger, takeBacks, takenBack } = await routedStep();
    const replyLost: StateStore = {
      ...store,
      recordCardCopy: async (stepId, copy) => {
        await store.recordCardCopy(stepId, copy);
        throw new Error('Connection is closed.');
      },
    };
    expect(await postMissingCopies({ store: replyLost, messenger, takeBacks, logger, step })).toBe(1);
    expect(takenBack).toEqual([]);
  });

  it('is left for the take-back to read again when the store cannot be read either', async () => {
    const { store, step, messenger, takeBacks, takenBack } = await routedStep();
    const out: StateStore = {
      ...store,
      recordCardCopy: async () => Promise.reject(new Error('Connection is closed.')),
      getStep: async () => Promise.reject(new Error('Connection is closed.')),
    };
    expect(await postMissingCopies({ store: out, messenger, takeBacks, logger, step })).toBe(0);
    expect(takenBack).toEqual([{ channel: APPROVALS, ts: ['copy-1'], threadKey: step.threadKey, stepId: step.stepId, recordUnknown: true }]);
  });
});
