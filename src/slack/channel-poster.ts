import type { WebClient } from '@slack/web-api';
import type { ChannelPoster } from '../conversation/scheduled-turns.js';
import { SlackResponseError } from '../errors/countersign-error.js';
import { neutralisePings } from './format/markdown-to-mrkdwn.js';

/** Top-level posts for scheduled turns: each firing's message starts the thread its turn runs in. */
export function createChannelPoster(client: WebClient): ChannelPoster {
  return {
    async postChannelMessage({ channel, text }) {
      const response = await client.chat.postMessage({ channel, text: neutralisePings(text, { mentionableUserIds: [] }) });
      if (!response.ts) throw new SlackResponseError({ method: 'chat.postMessage', missing: 'ts' });
      return response.ts;
    },
  };
}
