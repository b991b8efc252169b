import { ConfigError } from '../config/config-error.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

/**
 * What an `onApprovalRequest` hook is asked about one call that waits for approval. Everything is
 * a copy: changing it changes nothing the bot runs or shows.
 */
export interface ApprovalHookRequest {
  toolName: string;
  /** The model's input, as proposed (a deep copy). Untrusted. */
  input: unknown;
  /** The policy rule that governs the call (undefined when none does: the defaults apply). */
  rule: { index: number; name?: string } | undefined;
  /** The whole evaluation: approvers, required approvals, whether the rule forbids automatic approval… */
  policy: PolicyEvaluation;
  /** The Slack user whose message started the turn, or `schedule:<name>` for a scheduled turn. */
  requesterId: string;
  teamId: string;
  channel: string;
  threadTs: string;
  stepId: string;
  approvalId: string;
  /** Aborted when the hook's time is up; its answer no longer counts then. */
  signal: AbortSignal;
}

/** `undefined`: the hook has no opinion, people decide (the card waits as usual). */
export type ApprovalHookDecision = { decision: 'approve' } | { decision: 'deny'; reason: string } | undefined;

export type ApprovalHookFunction = (request: ApprovalHookRequest) => ApprovalHookDecision | Promise<ApprovalHookDecision>;

/** `createBot({ onApprovalRequest })`: a function, or one with a name for the audit trail and its own time limit. */
export type ApprovalHookOption = ApprovalHookFunction | { name: string; decide: ApprovalHookFunction; timeoutMs?: number };

export interface ApprovalHook {
  /** Shown on the card and in the audit trail as `hook:<name>`. */
  name: string;
  decide: ApprovalHookFunction;
  timeoutMs: number;
}

/** Long enough for a lookup in another service; short enough that nobody waits on a card for it. */
export const DEFAULT_APPROVAL_HOOK_TIMEOUT_MS = 5_000;
/**
 * The longest time limit a hook may have: a day, as for the timer knobs of the environment. Node
 * cannot time more than 2^31-1 ms and fires such a timer after 1 ms instead, so a larger "no limit
 * to speak of" would time every hook out at once.
 */
export const MAX_APPROVAL_HOOK_TIMEOUT_MS = 86_400_000;
const HOOK_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
const HOOK_ACTOR_PREFIX = 'hook:';

/** The decider recorded for a hook's decisions: never a Slack user id, so no click can pass for it. */
export function hookActor(name: string): string {
  return `${HOOK_ACTOR_PREFIX}${name}`;
}

/** The hook's name when `userId` is a hook's actor id. */
export function hookNameOf(userId: string): string | undefined {
  return userId.startsWith(HOOK_ACTOR_PREFIX) ? userId.slice(HOOK_ACTOR_PREFIX.length) : undefined;
}

/** Whoever decided, in text for the model or a person: a Slack mention, or the hook by name. */
export function deciderText(userId: string): string {
  const hook = hookNameOf(userId);
  return hook === undefined ? `<@${userId}>` : `the policy hook ${hook}`;
}

/** Checks the option once, at start-up: a bad name or time limit is a programming error, said plainly. */
export function resolveApprovalHook(option: ApprovalHookOption | undefined): ApprovalHook | undefined {
  if (option === undefined) return undefined;
  const given = typeof option === 'function' ? { name: nameOfFunction(option), decide: option } : option;
  const problem = (field: string, message: string) => new ConfigError({ problems: [{ field: `onApprovalRequest.${field}`, message }] });
  if (typeof given.decide !== 'function') throw problem('decide', 'must be a function');
  if (!HOOK_NAME_PATTERN.test(given.name)) throw problem('name', `must be 1–64 letters, digits, '.', '_' or '-' (got ${JSON.stringify(given.name)})`);
  const timeoutMs = 'timeoutMs' in given && given.timeoutMs !== undefined ? given.timeoutMs : DEFAULT_APPROVAL_HOOK_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_APPROVAL_HOOK_TIMEOUT_MS) {
    throw problem('timeoutMs', `must be a positive number of milliseconds, at most ${MAX_APPROVAL_HOOK_TIMEOUT_MS} (a day)`);
  }
  return { name: given.name, decide: given.decide, timeoutMs };
}

/**
 * A plain function's name is incidental (`bound decide`, a minifier's `$e`), not something the
 * operator chose: used when it is a valid hook name, else the option's. Only an explicit `name` can be wrong.
 */
function nameOfFunction(decide: ApprovalHookFunction): string {
  return HOOK_NAME_PATTERN.test(decide.name) ? decide.name : 'onApprovalRequest';
}

/** The reason a model and the card are shown; a hook is code, but what it returns is checked like input. */
const MAX_REASON_LENGTH = 500;

/** What the hook returned, checked: anything else than a well-formed decision leaves the call to people. */
export function readHookDecision(value: unknown): { decision: 'approve' } | { decision: 'deny'; reason: string } | undefined | 'malformed' {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object') return 'malformed';
  const { decision, reason } = value as { decision?: unknown; reason?: unknown };
  if (decision === 'approve') return { decision: 'approve' };
  if (decision === 'deny') {
    const text = typeof reason === 'string' ? reason.trim().slice(0, MAX_REASON_LENGTH) : '';
    return { decision: 'deny', reason: text === '' ? 'denied by policy hook' : text };
  }
  return 'malformed';
}
