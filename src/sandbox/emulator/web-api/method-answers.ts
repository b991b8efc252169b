import type { StoredMessage } from '../state/message-log.js';
import type { WorkspaceState } from '../state/workspace-state.js';
import { blockKitProblems, blocksTextLength, MESSAGE_BLOCKS_MAX, MESSAGE_BLOCKS_TEXT_MAX } from './block-kit-limits.js';
import type { SlackArguments } from './slack-request-arguments.js';

/** A Web API answer body; always sent with HTTP 200, like Slack does for method-level errors. */
export type SlackAnswer = Record<string, unknown>;

export type SlackMethodHandler = (options: { args: SlackArguments; state: WorkspaceState }) => SlackAnswer;

export function slackError(error: string): SlackAnswer & { ok: false; error: string } {
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
export function toSlackMessage(options: { message: StoredMessage; state: WorkspaceState }): SlackAnswer {
  const { message, state } = options;
  const { channel: _channel, format: _format, ...fields } = message;
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

/** An argument as the string Slack reads it (form values are strings already), or undefined when absent. */
export function stringArgument(value: unknown): string | undefined {
  return isMissing(value) ? undefined : String(value);
}

/** `blocks` as given: Slack checks them (and refuses non-arrays) in `invalidBlocksAnswer`. */
export function blocksArgument(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

/** Slack's refusal of a message's `blocks`, when it has some that break a limit. */
export function messageBlocksProblem(args: SlackArguments): SlackAnswer | undefined {
  return args.blocks === undefined ? undefined : messageBlocksAnswer(args.blocks);
}

/** Slack's refusal of blocks for a message: a limit of one block, else too much text in all of them. */
export function messageBlocksAnswer(blocks: unknown): SlackAnswer | undefined {
  const invalid = invalidBlocksAnswer({ blocks, maxBlocks: MESSAGE_BLOCKS_MAX });
  if (invalid) return invalid;
  return blocksTextLength(blocks) > MESSAGE_BLOCKS_TEXT_MAX ? slackError('msg_blocks_too_long') : undefined;
}

/** The `blocks` and `metadata` a message call sets; Slack keeps what a call does not mention. */
export function blocksAndMetadata(args: SlackArguments): { blocks?: unknown[]; metadata?: unknown } {
  const blocks = blocksArgument(args.blocks);
  return { ...(blocks === undefined ? {} : { blocks }), ...(args.metadata === undefined ? {} : { metadata: args.metadata }) };
}
