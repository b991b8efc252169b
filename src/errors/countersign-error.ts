/**
 * Every runtime failure countersign raises on purpose carries one of these codes, as Bolt's errors
 * do: match on `error.code` (it survives logging as JSON and duplicate copies of this module),
 * not on the message. Expected outcomes (a refused click, an invalid edit) are not errors: they are
 * discriminated unions returned by the functions that decide them.
 */
export const ErrorCode = {
  /** The environment or the config file is invalid (`ConfigError`: every problem, each naming its field). */
  ConfigInvalid: 'countersign_config_invalid',
  /** A command tool's argv template is malformed. */
  ArgvTemplateInvalid: 'countersign_argv_template_invalid',
  /**
   * The command spawner process died or was stopped while a command tool ran; the command was killed.
   * Or the runner was closed (the bot is stopping) before the command was started (`started: false`).
   */
  CommandRunnerFailed: 'countersign_command_runner_failed',
  /** Another process holds the thread now; this one stops without further effects. */
  Fenced: 'countersign_fenced',
  /** A thread's lock lapsed while this process drained it. */
  LockLost: 'countersign_lock_lost',
  /** Redis lost a thread's state (its fencing token) under a running turn: nothing the turn does can be saved. */
  StateLost: 'countersign_state_lost',
  /** A step kept changing under concurrent decisions until the retries ran out. */
  StepContended: 'countersign_step_contended',
  /** The model sent nothing for longer than the watchdog allows. */
  ModelTimeout: 'countersign_model_timeout',
  /** An agent turn failed; the calls that had already run are attached so they never run again. */
  TurnFailed: 'countersign_turn_failed',
  /** A Slack Web API call failed outright (network, auth, an error answer). */
  SlackCallFailed: 'countersign_slack_call_failed',
  /**
   * A card's post Slack may have applied though its reply was lost, and the thread could not be searched
   * for it (`CardPostUnconfirmedError`): whether the card is in the thread is not known yet.
   */
  CardPostUnconfirmed: 'countersign_card_post_unconfirmed',
  /** Slack answered a call without what the bot needs (no `ts`, no bot id). */
  SlackResponseInvalid: 'countersign_slack_response_invalid',
  /** The audit trail could not be written. */
  AuditAppendFailed: 'countersign_audit_append_failed',
  /** `npm run audit` was given arguments it cannot use. */
  AuditUsage: 'countersign_audit_usage',
  /** COUNTERSIGN_REDIS_SHARDS differs from the shard count the Redis data was written with. */
  RedisShardsMismatch: 'countersign_redis_shards_mismatch',
  /** A reader found no recorded shard count beside data it would read: it does not guess one. */
  RedisShardsUnknown: 'countersign_redis_shards_unknown',
  /** Fewer Redis replicas than required confirmed a call's executing marker in time; the call was not started. */
  ReplicationNotConfirmed: 'countersign_replication_not_confirmed',
  /**
   * A tool refused a call at its start, before anything reached what it drives (an MCP server's tools
   * withheld, the tool no longer offered, the server not connected; a closed command runner; a request
   * http_request would not send; input the tool's own check refused): the call did not run.
   */
  ToolNotStarted: 'countersign_tool_not_started',
  /** A step or thread was stored by a newer release (a rolling deploy, a rollback) in a format this one cannot read. */
  NewerSchema: 'countersign_newer_schema',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const MARKER = Symbol.for('countersign.error');

export abstract class CountersignError extends Error {
  abstract readonly code: ErrorCode;
  // Public so a copy of this module loaded twice still recognises it (`isInstance`).
  readonly [MARKER] = true;

  /** Works across duplicate copies of this module, unlike `instanceof`. */
  static isInstance(error: unknown): error is CountersignError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}

/** The countersign error code of `error`, if it is one of ours. */
export function errorCodeOf(error: unknown): ErrorCode | undefined {
  return CountersignError.isInstance(error) ? error.code : undefined;
}

/** True when `error` is a countersign error with this code. */
export function hasErrorCode(error: unknown, code: ErrorCode): boolean {
  return errorCodeOf(error) === code;
}

/** A Slack Web API call that succeeded but returned no usable result. */
export class SlackResponseError extends CountersignError {
  override readonly name = 'SlackResponseError';
  readonly code = ErrorCode.SlackResponseInvalid;
  /** The Web API method, e.g. `chat.postMessage`. */
  readonly method: string;

  constructor({ method, missing }: { method: string; missing: string }) {
    super(`${method} returned no ${missing}`);
    this.method = method;
  }
}

/** A Slack Web API call that failed; the message names the call, so "fetch failed" never stands alone. */
export class SlackCallError extends CountersignError {
  override readonly name = 'SlackCallError';
  readonly code = ErrorCode.SlackCallFailed;
  readonly method: string;
  /**
   * The same call may succeed if made again later: Slack failed or throttled it, or the network did
   * (it may have been applied all the same). False when Slack refused it (a channel gone, the bot not
   * in it), which a later call gets again, or when it is not known.
   */
  readonly tryLater: boolean;
  /** For a rate limit: how long Slack asked for before the call is made again. */
  readonly retryAfterMs: number | undefined;

  constructor({ method, cause, tryLater = false, retryAfterMs }: { method: string; cause: unknown; tryLater?: boolean; retryAfterMs?: number }) {
    super(`Slack ${method} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.method = method;
    this.tryLater = tryLater;
    this.retryAfterMs = retryAfterMs;
  }
}

/** Whether `error` is a Slack call that may succeed if made again later (`SlackCallError.tryLater`). */
export function slackMayTakeItLater(error: unknown): boolean {
  return hasErrorCode(error, ErrorCode.SlackCallFailed) && (error as SlackCallError).tryLater === true;
}

/** How long Slack asked for before `error`'s call is made again, for a rate-limited one (`SlackCallError.retryAfterMs`). */
export function slackRetryAfterMs(error: unknown): number | undefined {
  return hasErrorCode(error, ErrorCode.SlackCallFailed) ? (error as SlackCallError).retryAfterMs : undefined;
}

/**
 * What finds a card whose post's outcome is not known, once the thread can be read: the post's own
 * mark (a card posted again has the text and blocks of others), its text and a message ts it is newer than.
 */
export interface UnconfirmedCardPost {
  mark: string;
  text: string;
  after: string;
}

/**
 * A card's post that failed in a way Slack may have applied (a 502, a connection lost after the request
 * went out), whose card could not be looked for in the thread: the card may stand there with live buttons.
 * Its message is the failure's, so a notice quoting it reads as before.
 */
export class CardPostUnconfirmedError extends CountersignError {
  override readonly name = 'CardPostUnconfirmedError';
  readonly code = ErrorCode.CardPostUnconfirmed;
  readonly post: UnconfirmedCardPost;

  constructor({ cause, post }: { cause: unknown; post: UnconfirmedCardPost }) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.post = post;
  }
}

/** The post whose outcome is not known, for a `CardPostUnconfirmedError`. */
export function unconfirmedCardPostOf(error: unknown): UnconfirmedCardPost | undefined {
  return hasErrorCode(error, ErrorCode.CardPostUnconfirmed) ? (error as CardPostUnconfirmedError).post : undefined;
}
