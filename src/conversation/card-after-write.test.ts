import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { FencedError } from '../store/fenced-error.js';
import { createMemoryStore } from '../store/memory-store.js';
import { SWEEP_SHOWS_AFTER_MS, writeThenShowCard } from './card-after-write.js';
import type { ThreadMessenger } from './thread-messenger.js';

const logger = pino({ level: 'silent' });
const AT = 1_900_000_000_000;

/** A step write whose card is shown after it: the card is the sweep's from before the write until it is shown. */
describe('writeThenShowCard', () => {
  function setUp(updateStepCard: () => Promise<void>) {
    const store = createMemoryStore({ now: () => AT });
    const shown: string[] = [];
    const messenger = {
      updateStepCard: async ({ step }: { step: { stepId: string } }) => {
        await updateStepCard();
        shown.push(step.stepId);
      },
      updateStepCopy: async () => {},
    } as unknown as ThreadMessenger;
    const step = makeStep(['restart_service'], { cardTs: '1700000000.000200' });
    const kept = () => store.dueCardRefreshes({ now: AT + SWEEP_SHOWS_AFTER_MS, limit: 10 });
    const run = (write: () => Promise<typeof step | undefined>) => writeThenShowCard({ scope: { messenger }, store, stepId: step.stepId, logger, now: () => AT }, write);
    return { store, step, shown, kept, run };
  }

  it('keeps a refresh for the sweep before the write, due a while after it, and forgets it once the card is shown', async () => {
    const { step, shown, kept, run } = setUp(async () => {});
    let keptAtWrite: unknown[] = [];
    await run(async () => {
      keptAtWrite = await kept();
      return step;
    });
    expect(keptAtWrite).toEqual([{ stepId: step.stepId, since: AT }]);
    expect(shown).toEqual([step.stepId]);
    expect(await kept()).toEqual([]);
  });

  it('leaves the refresh to the sweep when the process lost the thread before showing the card', async () => {
    const { step, kept, run } = setUp(async () => {
      throw new FencedError(step.threadKey);
    });
    await expect(run(async () => step)).rejects.toBeInstanceOf(FencedError);
    expect(await kept()).toEqual([{ stepId: step.stepId, since: AT }]);
  });

  it('leaves it to the sweep when the write throws', async () => {
    const { step, kept, run } = setUp(async () => {});
    await expect(
      run(async () => {
        throw new Error('Connection is closed.');
      }),
    ).rejects.toThrow('Connection is closed.');
    expect(await kept()).toEqual([{ stepId: step.stepId, since: AT }]);
  });

  it('makes it due at once when Slack would not update the card', async () => {
    const { store, step, run } = setUp(async () => {
      throw new Error('ratelimited');
    });
    await run(async () => step);
    expect(await store.dueCardRefreshes({ now: AT, limit: 10 })).toEqual([{ stepId: step.stepId, since: AT }]);
  });

  it('forgets it when nothing was written', async () => {
    const { shown, kept, run } = setUp(async () => {});
    await run(async () => undefined);
    expect(shown).toEqual([]);
    expect(await kept()).toEqual([]);
  });
});
