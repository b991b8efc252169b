import { z } from 'zod';
import type { ActionRequest, CommandRequest, PostMessageRequest, ViewSubmitRequest } from '../sandbox-api.js';

/**
 * The bodies the page sends (sandbox-api.ts), checked before anything is delivered: a bad one is
 * answered 400 with the field it got wrong, and who acts and where must be in the sandbox workspace.
 */
const id = z.string().min(1).max(200);
const slackTs = z.string().regex(/^\d+\.\d+$/, 'must be a Slack ts such as 1736954412.004219');
const stateValues = z.record(z.string(), z.record(z.string(), z.unknown()));

const postMessage = z.object({ user: id, channel: id, text: z.string().min(1).max(40_000), threadTs: slackTs.optional() });

const action = z.object({
  user: id,
  channel: id,
  container: z.discriminatedUnion('type', [
    z.object({ type: z.literal('message'), messageTs: slackTs, threadTs: slackTs.optional() }),
    z.object({ type: z.literal('ephemeral'), id }),
    z.object({ type: z.literal('view'), viewId: id }),
  ]),
  // Empty when the bot sent the block without a block_id (Slack then makes one up).
  blockId: z.string().max(255),
  actionId: z.string().min(1).max(255),
  element: z.record(z.string(), z.unknown()).refine((element) => typeof element.type === 'string', 'must have a type'),
  selected: z.unknown().optional(),
});

const viewSubmit = z.object({ user: id, viewId: id, values: stateValues });
const viewClose = z.object({ user: id, viewId: id });
const command = z.object({ user: id, channel: id, command: z.string().regex(/^\/[a-z0-9_-]+$/, 'must be a slash command such as /countersign'), text: z.string().max(4000) });

export interface KnownIds {
  users: ReadonlySet<string>;
  channels: ReadonlySet<string>;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

export function checkRequest<T>(options: { schema: z.ZodType<T>; body: unknown; known: KnownIds }): Checked<T> {
  const parsed = options.schema.safeParse(options.body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') || 'body';
    return { ok: false, error: `${field}: ${issue?.message ?? 'invalid'}` };
  }
  const value = parsed.data as T & { user?: string; channel?: string };
  if (value.user !== undefined && !options.known.users.has(value.user)) return { ok: false, error: 'user: not a person in the sandbox workspace' };
  if (value.channel !== undefined && !options.known.channels.has(value.channel)) return { ok: false, error: 'channel: not a channel of the sandbox workspace' };
  return { ok: true, value };
}

/** What each route accepts; `checkRequest` returns the typed body or the 400 message. */
export const SANDBOX_REQUESTS = {
  postMessage: postMessage satisfies z.ZodType<PostMessageRequest>,
  action: action satisfies z.ZodType<ActionRequest>,
  viewSubmit: viewSubmit satisfies z.ZodType<ViewSubmitRequest>,
  viewClose,
  command: command satisfies z.ZodType<CommandRequest>,
};
