import { randomBytes } from 'node:crypto';

/** Where an answer posted to a `response_url` goes: the surface the interaction came from. */
export interface ResponseTarget {
  channel: string;
  /** Who acted; ephemeral answers are for them. */
  user: string;
  threadTs?: string;
  source?: { kind: 'message'; ts: string } | { kind: 'ephemeral'; id: string };
}

/**
 * The short-lived handles Slack hands out with an interaction: trigger ids (usable once, and
 * Slack knows whose screen a modal opened with one goes to) and response URLs.
 */
export interface InteractionHandles {
  issueTrigger(user: string): string;
  /** `undefined` user: a trigger the emulator did not issue (a payload a test built), still accepted once. */
  consumeTrigger(triggerId: string): { ok: true; user?: string } | { ok: false; error: string };
  /** The id that the emulator's `response_url` for this interaction ends with. */
  addResponseTarget(target: ResponseTarget): string;
  responseTarget(id: string): ResponseTarget | undefined;
  clear(): void;
}

/** Slack's response URLs work for 30 minutes; after that they answer 404, here too. */
const RESPONSE_URL_LIFETIME_MS = 30 * 60 * 1000;
const RESPONSE_ID_BYTES = 16;
/**
 * Slack's triggers expire after 3 s; they are remembered far longer so a reuse is still reported as
 * `exchanged_trigger_id`, but not forever: a sandbox runs for days.
 */
const TRIGGER_MEMORY_MS = 10 * 60 * 1000;

export function createInteractionHandles(options: { nextId: (prefix: string) => string; now?: () => number }): InteractionHandles {
  const now = options.now ?? Date.now;
  const triggers = new Map<string, { user?: string; used: boolean; at: number }>();
  const responseTargets = new Map<string, ResponseTarget & { at: number }>();
  return {
    issueTrigger(user) {
      forgetOlderThan({ entries: triggers, ageMs: TRIGGER_MEMORY_MS, now: now() });
      const triggerId = `${now()}.${options.nextId('')}.sandbox`;
      triggers.set(triggerId, { user, used: false, at: now() });
      return triggerId;
    },
    consumeTrigger(triggerId) {
      const known = triggers.get(triggerId);
      // Reusing a trigger is a real production bug (a double click opening two modals).
      if (known?.used) return { ok: false, error: 'exchanged_trigger_id' };
      triggers.set(triggerId, { ...known, used: true, at: known?.at ?? now() });
      return known?.user === undefined ? { ok: true } : { ok: true, user: known.user };
    },
    addResponseTarget(target) {
      forgetOlderThan({ entries: responseTargets, ageMs: RESPONSE_URL_LIFETIME_MS, now: now() });
      // Unguessable, like Slack's: a response_url needs no token, so knowing it is permission to post.
      const id = `R${randomBytes(RESPONSE_ID_BYTES).toString('hex')}`;
      responseTargets.set(id, { ...target, at: now() });
      return id;
    },
    responseTarget(id) {
      const stored = responseTargets.get(id);
      if (stored === undefined || now() - stored.at > RESPONSE_URL_LIFETIME_MS) return undefined;
      const { at: _at, ...target } = stored;
      return target;
    },
    clear() {
      triggers.clear();
      responseTargets.clear();
    },
  };
}

/** Entries are added in time order, so the old ones are at the front. */
function forgetOlderThan(options: { entries: Map<string, { at: number }>; ageMs: number; now: number }): void {
  for (const [key, entry] of options.entries) {
    if (options.now - entry.at <= options.ageMs) return;
    options.entries.delete(key);
  }
}
