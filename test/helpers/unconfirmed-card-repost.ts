import { afterEach } from 'vitest';
import { createCardRefreshes } from '../../src/approvals/card-refreshes.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import { createWebApiMessenger } from '../../src/slack/web-api-messenger.js';
import { CARD_REPOST_CHANNEL, clientLosingCardReply, clientLosingNoticeReply, recordedTakeBacks, startCardRepostScene } from './card-repost-scene.js';

const DAY_MS = 86_400_000;

/** Wraps a replica's look for a card whose post lost its reply: `original` is the real look. */
type FindPostedCard = (original: () => Promise<string | undefined>) => Promise<string | undefined>;
/** Wraps a replica's notice post: `original` is the real post. */
type PostNotice = (original: () => Promise<void>) => Promise<void>;

/**
 * A card posted again whose reply was lost while the thread could not be read: the card's first re-post
 * loses its reply (applied by Slack, or not), and the thread stays unreadable until the test lifts the
 * outage. `noticeReplyLost`: the first notice posted loses its reply too (Slack posted it). Card
 * refreshes run on the test's clock, which only `advance` and `sweepLater` move.
 */
export async function startUnconfirmedCardRepost(options: { cleanups: Array<() => Promise<void>>; applied: boolean; noticeReplyLost?: boolean }) {
  const scene = await startCardRepostScene({ cleanups: options.cleanups, threadUnreadable: true });
  const { slack, store, step, logger, threadTs } = scene;
  const { takeBacks, takenBack } = recordedTakeBacks();
  const lossy = clientLosingCardReply({ client: options.noticeReplyLost === true ? clientLosingNoticeReply(scene.client) : scene.client, stepId: step.stepId, applied: options.applied });

  let clock = Date.now();
  /** Another replica's card refreshes over the same lossy client, its look at the thread wrapped by `find`, its notices by `postNotice`. */
  const makeRefreshes = ({ find, postNotice }: { find?: FindPostedCard; postNotice?: PostNotice } = {}) => {
    const base = createWebApiMessenger({ client: lossy.client, logger });
    const messenger: ThreadMessenger = {
      ...base,
      ...(find === undefined ? {} : { findPostedCard: (look: Parameters<typeof base.findPostedCard>[0]) => find(() => base.findPostedCard(look)) }),
      ...(postNotice === undefined ? {} : { postNotice: (notice: Parameters<typeof base.postNotice>[0]) => postNotice(() => base.postNotice(notice)) }),
    };
    return createCardRefreshes({ store, messenger, takeBacks, logger, now: () => clock, pause: async () => {} });
  };
  const refreshes = makeRefreshes();
  return {
    slack,
    store,
    step,
    first: scene.firstCardTs,
    refreshes,
    makeRefreshes,
    advance: (ms: number) => {
      clock += ms;
    },
    takenBack,
    /** The lost card's ts, 'not-applied', or undefined before the re-post. */
    lost: lossy.lost,
    cardsPosted: () => slack.callsTo('chat.postMessage').filter((call) => JSON.stringify(call.args.blocks ?? []).includes(step.stepId)).length,
    notices: () =>
      slack
        .messages(CARD_REPOST_CHANNEL, threadTs)
        .filter((message) => message.text.startsWith(':warning:'))
        .map((message) => message.text),
    /** A sweep a while later (the kept pauses double: an hour is past any of them). */
    sweepLater: async (ms = 3_600_000) => {
      clock += ms;
      await refreshes.retryDue();
    },
    kept: async () => store.dueCardRefreshes({ now: clock + DAY_MS, limit: 10 }),
  };
}

/** Registers the clean-up after each test and answers the scene's start, for a test file's `setUp`. */
export function useUnconfirmedCardRepost(): (options: { applied: boolean; noticeReplyLost?: boolean }) => ReturnType<typeof startUnconfirmedCardRepost> {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (options) => startUnconfirmedCardRepost({ cleanups, ...options });
}
