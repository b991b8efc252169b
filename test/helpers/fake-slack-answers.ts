import { blockKitProblems } from './block-kit-limits.js';
import type { FakeSlackState, StoredSlackMessage } from './fake-slack-state.js';

/** A Web API answer body; always sent with HTTP 200, like Slack does for method-level errors. */
export type SlackAnswer = Record<string, any>;

export type SlackMethodHandler = (options: { args: Record<string, any>; state: FakeSlackState }) => SlackAnswer;

export function slackError(error: string): SlackAnswer {
  return { ok: false, error };
}

/** Slack lists each violated limit in `errors` and repeats them as `[ERROR]` response metadata. */
export function invalidBlocksAnswer(options: { blocks: unknown; maxBlocks: number; pointer?: string }): SlackAnswer | undefined {
  const problems = blockKitProblems(options);
  if (problems.length === 0) return undefined;
  return {
    ok: false,
    error: 'invalid_blocks',
    errors: problems,
    response_metadata: { messages: problems.map((problem) => `[ERROR] ${problem}`) },
  };
}

/** The message object Slack embeds in answers and in conversations.replies. */
export function toSlackMessage(options: { message: StoredSlackMessage; state: FakeSlackState }): SlackAnswer {
  const { message, state } = options;
  const { channel: _channel, ...fields } = message;
  const isOwnBotMessage = message.bot_id === state.identity.botId;
  return {
    type: 'message',
    ...fields,
    ...(isOwnBotMessage ? { app_id: state.identity.appId } : {}),
    team: state.identity.teamId,
  };
}

export function textFromChunks(chunks: unknown): string {
  if (!Array.isArray(chunks)) return '';
  return chunks
    .filter((chunk): chunk is { type: 'markdown_text'; text: string } => chunk?.type === 'markdown_text' && typeof chunk.text === 'string')
    .map((chunk) => chunk.text)
    .join('');
}

export function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}
