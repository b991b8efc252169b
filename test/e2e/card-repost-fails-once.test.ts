import { ErrorCode, type WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';
import type { StateStore } from '../../src/store/state-store.js';
import { CARD_REPOST_CHANNEL, clientLosingNoticeReply, recordedTakeBacks, startCardRepostScene } from '../helpers/card-repost-scene.js';

/**
 * A card Slack will not update for good (cant_update_message) is posted again, and one step of that
 * fails once, in a way a later try gets past. The refresh must be tried again until the new card is
 * posted, recorded and the thread told, not end with the card Slack will not update as the step's only
 * one (after an edit, its buttons offer a version every click is refused for).
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The scene over `store` (the scene's own by default) and `client` (the scene's), on a clock only the
 * pauses and `sweepsLater` move.
 */
async function setUp(options: { store?: (store: StateStore) => StateStore; client?: (client: WebClient, stepId: string) => WebClient } = {}) {
  const scene = await startCardRepostScene({ cleanups });
  const store = options.store?.(scene.store) ?? scene.store;
  const messenger = options.client === undefined ? scene.messenger : createWebApiMessenger({ client: options.client(scene.client, scene.step.stepId), logger: scene.logger });
  const { takeBacks, takenBack } = recordedTakeBacks();
  let clock = Date.now();
  const refreshes = createCardRefreshes({ store, messenger, takeBacks, logger: scene.logger, now: () => clock, pause: async (ms) => void (clock += ms) });
  return {
    ...scene,
    store,
    refreshes,
    takenBack,
    clock: () => clock,
    /** Sweeps an hour apart: past any kept pause. */
    sweepsLater: async () => {
      for (let i = 0; i < 3; i += 1) {
        clock += 3_600_000;
        await refreshes.retryDue();
      }
    },
    notices: () =>
      scene.slack
        .messages(CARD_REPOST_CHANNEL, scene.threadTs)
        .filter((message) => message.text.startsWith(':warning:'))
        .map((message) => message.text),
  };
}

/** A client whose FIRST post of the step's card Slack applies but answers `ok: false, error`. */
function clientAppliedButFailed(error: string) {
  return (client: WebClient, stepId: string): WebClient => {
    let failed = false;
    const chat = Object.create(client.chat) as typeof client.chat;
    chat.postMessage = (async (args: Parameters<typeof client.chat.postMessage>[0]) => {
      const isCard = JSON.stringify('blocks' in args ? args.blocks : []).includes(stepId);
      if (!isCard || failed) return client.chat.postMessage(args);
      failed = true;
      await client.chat.postMessage(args);
      throw Object.assign(new Error(`An API error occurred: ${error}`), { code: ErrorCode.PlatformError, data: { ok: false, error } });
    }) as typeof client.chat.postMessage;
    const wrapped = Object.create(client) as WebClient;
    Object.defineProperty(wrapped, 'chat', { value: chat });
    return wrapped;
  };
}

describe('a card posted again, one step of it failing once', () => {
  it('a re-post Slack failed for now (service_unavailable, nothing posted) is posted by a later try', async () => {
    const t = await setUp();
    t.slack.failNext('chat.postMessage', { error: 'service_unavailable' });

    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    await t.sweepsLater();
    const cards = t.slack.messages(CARD_REPOST_CHANNEL, t.threadTs).filter((message) => message.ts !== t.threadTs && JSON.stringify(message.blocks ?? []).includes(t.step.stepId));
    const recorded = (await t.store.getStep(t.step.stepId))?.cardTs;
    expect({ cardsInThread: cards.length, recordedIsTheStaleCard: recorded === t.firstCardTs, notices: t.notices() }).toEqual({
      cardsInThread: 2,
      recordedIsTheStaleCard: false,
      notices: [expect.stringContaining('so it is posted again just above')],
    });
  });

  it('a re-post whose record the store failed once (nothing written) is taken back and posted again by a later try', async () => {
    let failRecord = true;
    const t = await setUp({
      store: (store) => ({
        ...store,
        replaceStepCard: async (...args) => {
          if (!failRecord) return store.replaceStepCard(...args);
          failRecord = false;
          throw new Error('Connection is closed.');
        },
      }),
    });

    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    await t.sweepsLater();
    const recorded = (await t.store.getStep(t.step.stepId))?.cardTs;
    expect({ recordedIsTheStaleCard: recorded === t.firstCardTs, takenBack: t.takenBack.length, notices: t.notices() }).toEqual({
      recordedIsTheStaleCard: false,
      takenBack: 1,
      notices: [expect.stringContaining('so it is posted again just above')],
    });
  });

  it('a notice of a card posted again and recorded that Slack failed once (a 503) is told by a later try', async () => {
    const t = await setUp();
    // Slack fails the notice for the first minute of the test's clock.
    const failUntil = t.clock() + 60_000;
    t.slack.failWhen('chat.postMessage', (call) => String(call.args.text ?? '').startsWith(':warning:') && t.clock() < failUntil, { status: 503 });

    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    const cardTs = (await t.store.getStep(t.step.stepId))?.cardTs;
    expect(cardTs).not.toBe(t.firstCardTs);
    await t.sweepsLater();
    expect({ cardTs: (await t.store.getStep(t.step.stepId))?.cardTs, notices: t.notices() }).toEqual({ cardTs, notices: [expect.stringContaining('so it is posted again just above')] });
  });

  // The notice owed is looked for (`unlessPostedAfter`) by its text: told first with Slack's refusal in
  // it ("(… cant_update_message)") and owed without, it was not found and the thread told twice.
  it('a notice of a card posted again (its post answered) that Slack posted but whose reply was lost (a 502) is told once', async () => {
    const t = await setUp({ client: clientLosingNoticeReply });

    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    await t.sweepsLater();
    expect(t.notices()).toEqual([expect.stringContaining('so it is posted again just above')]);
  });

  // Slack documents both as "It's possible some aspect of the operation succeeded before the error was
  // raised": posted again without a look, the thread would keep two re-posted cards, the first
  // unrecorded (never updated) with live buttons that decide.
  it.each(['internal_error', 'fatal_error'])('a re-post Slack applied but answered %s leaves one re-posted card, the one on record', async (error) => {
    const t = await setUp({ client: clientAppliedButFailed(error) });

    await t.refreshes.redraw({ stepId: t.step.stepId, error: new Error('cant_update_message') });
    await t.sweepsLater();
    const recorded = (await t.store.getStep(t.step.stepId))?.cardTs;
    const reposted = t.slack
      .messages(CARD_REPOST_CHANNEL, t.threadTs)
      .filter((message) => message.ts !== t.threadTs && message.ts !== t.firstCardTs && JSON.stringify(message.blocks ?? []).includes(t.step.stepId))
      .map((message) => message.ts)
      .filter((ts) => !t.takenBack.includes(ts));
    expect({ reposted, notices: t.notices() }).toEqual({ reposted: [recorded], notices: [expect.stringContaining('so it is posted again just above')] });
  });
});
