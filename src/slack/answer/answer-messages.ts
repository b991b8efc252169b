import { SlackResponseError } from '../../errors/countersign-error.js';
import type { WebClient } from '@slack/web-api';
import { mayHaveBeenApplied } from '../unrepeated-slack-writes.js';
import { postedAfter, type UnconfirmedPost } from './unconfirmed-post.js';

export interface ShownMessage {
  ts: string;
  text: string;
}

/**
 * Makes the thread show `texts`, reusing the answer's messages already posted: changed ones are
 * updated, missing ones posted, surplus ones deleted. Returns what is shown now. A failure
 * propagates; what was shown before the failure is in `onPosted`'s last call. A post Slack may have
 * applied all the same (its reply was lost) is told to `onUnconfirmed` first, for the caller to look for.
 */
export async function showAnswerMessages(options: {
  client: WebClient;
  channel: string;
  threadTs: string;
  shown: readonly ShownMessage[];
  texts: readonly string[];
  onPosted?: (shown: readonly ShownMessage[]) => void;
  onUnconfirmed?: (post: UnconfirmedPost) => void;
}): Promise<ShownMessage[]> {
  const { client, channel, threadTs } = options;
  const shown = [...options.shown];
  for (const [index, text] of options.texts.entries()) {
    const existing = shown[index];
    if (existing === undefined) {
      const after = postedAfter(shown.at(-1)?.ts);
      const response = await client.chat.postMessage({ channel, thread_ts: threadTs, text, unfurl_links: false, unfurl_media: false }).catch((error: unknown) => {
        if (mayHaveBeenApplied(error)) options.onUnconfirmed?.({ text, after });
        throw error;
      });
      if (!response.ts) throw new SlackResponseError({ method: 'chat.postMessage', missing: 'ts' });
      shown.push({ ts: response.ts, text });
      options.onPosted?.(shown);
    } else if (existing.text !== text) {
      await client.chat.update({ channel, ts: existing.ts, text });
      shown[index] = { ts: existing.ts, text };
    }
  }
  // The finished answer can need fewer messages than its draft did (a table became one code block).
  while (shown.length > options.texts.length) {
    const surplus = shown.pop() as ShownMessage;
    await client.chat.delete({ channel, ts: surplus.ts }).catch(() => client.chat.update({ channel, ts: surplus.ts, text: '…' }));
  }
  return shown;
}
