/**
 * The contract between the sandbox page (src/sandbox/web/public, plain browser JavaScript) and the
 * sandbox server (src/sandbox/web/sandbox-server.ts). The page holds no state of its own: it renders
 * the latest snapshot and sends what the person did; the server turns each action into the signed
 * request Slack would send to the bot's real Bolt receiver.
 *
 * Routes (JSON in and out unless said otherwise):
 * - `GET /`                      the page (HTML); static files under `/static/…`.
 * - `GET /api/state`             the current `SandboxSnapshot`.
 * - `GET /api/events`            Server-Sent Events: one `snapshot` event (data: `SandboxSnapshot`) at
 *                                once, and another after every change (message posted, updated or
 *                                deleted, ephemeral, view opened/updated/closed, stream appended).
 * - `POST /api/messages`         `PostMessageRequest`; delivers `message` (+ `app_mention` when the
 *                                text mentions the bot) events. Answers `{ ok: true, ts }`. A plain
 *                                `@name` of a sandbox person or of the bot is sent as `<@U…>`, as
 *                                Slack's composer does (text already in that form is kept).
 * - `POST /api/actions`          `ActionRequest`; delivers a signed `block_actions`. `{ ok: true }`.
 * - `POST /api/views/submit`     `ViewSubmitRequest`; delivers a signed `view_submission` and answers
 *                                `ViewSubmitResponse` (field errors come back from the bot's
 *                                `response_action: errors`).
 * - `POST /api/views/close`      `{ viewId, user }`; closes the modal (delivers `view_closed` only if
 *                                the view asked for `notify_on_close`). `{ ok: true }`.
 * - `POST /api/commands`         `CommandRequest`; delivers the signed slash command; the bot's
 *                                replies (ack text, `respond()` through `response_url`) arrive as
 *                                ephemerals. `{ ok: true }`.
 * Errors: HTTP 400 with `{ ok: false, error: string }` naming the bad field; 415 for a POST body
 * not sent as `application/json`. Only the page itself is answered: a Host other than the sandbox's
 * own address gets 421, an Origin other than the page's 403 (plain text; own-page-requests.ts).
 */

export interface SandboxUser {
  id: string;
  /** Handle shown after `@`, e.g. `alice`. */
  name: string;
  /** What the user switcher says about them, e.g. "requester" or "on-call approver". */
  role: string;
}

/** A user group, so `<!subteam^S…>` shows as `@handle`. */
export interface SandboxUsergroup {
  id: string;
  handle: string;
}

export interface SandboxChannel {
  id: string;
  name: string;
}

export interface SandboxMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  /** The author; the bot's user id for the bot's messages. */
  user?: string;
  botId?: string;
  /** mrkdwn, or Markdown where `format` says so: the page renders it. */
  text: string;
  /** `markdown` for a native stream's `markdown_text`, which Slack renders as Markdown; absent: mrkdwn. */
  format?: 'markdown';
  /** The Block Kit blocks exactly as the bot sent them. */
  blocks?: unknown[];
  /** True while a native stream is open (chat.startStream … chat.stopStream). */
  streaming?: boolean;
  edited?: boolean;
}

export interface SandboxEphemeral {
  id: string;
  channel: string;
  threadTs?: string;
  /** Who sees it. */
  user: string;
  text: string;
  blocks?: unknown[];
  at: number;
}

export interface SandboxView {
  viewId: string;
  /** Whose screen it is open on. */
  user: string;
  /** The view exactly as the bot sent it to views.open / views.update / views.push. */
  view: Record<string, unknown>;
  /** From the last submit's `response_action: errors`: block_id → message. */
  errors?: Record<string, string>;
  /**
   * The `state.values` of the last submit (same shape as `ViewSubmitRequest.values`), so a modal
   * drawn again after errors can keep what the person entered. Absent before the first submit.
   */
  values?: Record<string, Record<string, unknown>>;
}

export interface SandboxSnapshot {
  workspace: {
    teamId: string;
    botUserId: string;
    botName: string;
    users: SandboxUser[];
    channels: SandboxChannel[];
    usergroups?: SandboxUsergroup[];
    /** The demo model is in use (no OPENAI_API_KEY): the page says so. */
    demoModel: boolean;
  };
  /** Every message of every channel, oldest first; replies carry `threadTs`. */
  messages: SandboxMessage[];
  ephemerals: SandboxEphemeral[];
  /** Open modals, the top of each user's stack last. */
  views: SandboxView[];
  /** Assistant thread status (assistant.threads.setStatus), by `${channel}:${threadTs}`. */
  statuses: Record<string, string>;
}

export interface PostMessageRequest {
  user: string;
  channel: string;
  text: string;
  /** Reply in this thread. */
  threadTs?: string;
}

export interface ActionRequest {
  user: string;
  channel: string;
  /** The message (or ephemeral id, or view id) the element is in. */
  container: { type: 'message'; messageTs: string; threadTs?: string } | { type: 'ephemeral'; id: string } | { type: 'view'; viewId: string };
  blockId: string;
  actionId: string;
  /** The element as the bot sent it (the server copies `type`, `value`, `text`, `confirm`). */
  element: Record<string, unknown>;
  /** For selects, checkboxes and the like: the chosen option(s), as Slack reports them. */
  selected?: unknown;
}

export interface ViewSubmitRequest {
  user: string;
  viewId: string;
  /** `state.values` exactly as Slack shapes it: block_id → action_id → element state. */
  values: Record<string, Record<string, unknown>>;
}

export type ViewSubmitResponse =
  | { ok: true; outcome: 'closed' | 'updated' | 'pushed' }
  | { ok: true; outcome: 'errors'; errors: Record<string, string> }
  | { ok: false; error: string };

export interface CommandRequest {
  user: string;
  channel: string;
  /** Always `/countersign` today. */
  command: string;
  text: string;
}
