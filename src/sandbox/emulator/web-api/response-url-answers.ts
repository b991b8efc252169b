import type { ResponseTarget } from '../state/interaction-handles.js';
import type { WorkspaceState } from '../state/workspace-state.js';
import { clearThreadStatus } from './message-methods.js';
import { blocksArgument, messageBlocksAnswer, stringArgument, type SlackAnswer } from './method-answers.js';
import { isPlainObject } from './slack-request-arguments.js';

/**
 * What Slack does with a message posted to an interaction's `response_url` (Bolt's `respond()`, or
 * a slash command's answer): delete or replace the message (or ephemeral) the interaction came
 * from, or add a new one: ephemeral for the person who acted unless `response_type: in_channel`.
 */
export function answerResponseUrl(options: { state: WorkspaceState; target: ResponseTarget; body: unknown }): { status: number; body: SlackAnswer } {
  const { state, target } = options;
  if (!isPlainObject(options.body)) return { status: 400, body: { ok: false, error: 'invalid_payload' } };
  const payload = options.body;
  const source = target.source;
  if (payload.delete_original === true || payload.delete_original === 'true') {
    if (source?.kind === 'message') state.messages.remove({ channel: target.channel, ts: source.ts });
    if (source?.kind === 'ephemeral') state.ephemerals.remove(source.id);
    return { status: 200, body: { ok: true } };
  }
  if (payload.blocks !== undefined) {
    const invalid = messageBlocksAnswer(payload.blocks);
    if (invalid) return { status: 400, body: invalid };
  }
  const text = typeof payload.text === 'string' ? payload.text : '';
  const blocks = blocksArgument(payload.blocks);
  const content = { text, ...(blocks === undefined ? {} : { blocks }) };
  if ((payload.replace_original === true || payload.replace_original === 'true') && source !== undefined) {
    return { status: 200, body: { ok: replaceOriginal({ state, target, source, content }) } };
  }
  const threadTs = stringArgument(payload.thread_ts) ?? target.threadTs;
  if (payload.response_type === 'in_channel') {
    state.messages.store({
      channel: target.channel,
      ts: state.nextTs(),
      ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
      user: state.identity.botUserId,
      bot_id: state.identity.botId,
      ...content,
    });
    if (threadTs !== undefined) clearThreadStatus({ state, channel: target.channel, threadTs });
  } else {
    state.ephemerals.post({ channel: target.channel, user: target.user, ...(threadTs === undefined ? {} : { threadTs }), ...content });
  }
  return { status: 200, body: { ok: true } };
}

function replaceOriginal(options: {
  state: WorkspaceState;
  target: ResponseTarget;
  source: NonNullable<ResponseTarget['source']>;
  content: { text: string; blocks?: unknown[] };
}): boolean {
  const { state, target, source, content } = options;
  if (source.kind === 'ephemeral') return state.ephemerals.replace({ id: source.id, content });
  const message = state.messages.find({ channel: target.channel, ts: source.ts });
  if (!message) return false;
  state.messages.update({ message, changes: { text: content.text, format: undefined, blocks: content.blocks ?? [], edited: { user: state.identity.botUserId, ts: state.nextTs() } } });
  return true;
}
