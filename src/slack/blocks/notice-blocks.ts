import type { types } from '@slack/bolt';
import { APPROVAL_ACTION_IDS } from './action-ids.js';
import { SLACK_LIMITS, truncateText } from './limits.js';

/**
 * The blocks of a notice countersign itself posts (errors, notes, reminders): its text in a context
 * block, with Try again when asked for. Answers are the model's words posted as plain text, never
 * with a context block, so an answer that copies a notice word for word is still told apart from
 * countersign's own. The message's `text` stays the whole notice, for notifications and fallbacks.
 */
export function noticeBlocks(text: string, options: { retryButton?: boolean } = {}): types.KnownBlock[] {
  return [
    { type: 'context', elements: [{ type: 'mrkdwn', text: truncateText(text, SLACK_LIMITS.textObjectLength) }] },
    ...(options.retryButton
      ? [
          {
            type: 'actions' as const,
            elements: [{ type: 'button' as const, action_id: APPROVAL_ACTION_IDS.retry, text: { type: 'plain_text' as const, text: 'Try again' }, value: 'retry' }],
          },
        ]
      : []),
  ];
}
