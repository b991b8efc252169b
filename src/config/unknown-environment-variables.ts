import type { ConfigProblem } from './config-error.js';
import { closestName } from './closest-name.js';

/** The prefix of countersign's own variables; other names are no concern of this check. */
const PREFIX = 'COUNTERSIGN_';

/**
 * COUNTERSIGN_* variables read by other entry points than the bot's environment (parseEnvironment):
 * setting one for the bot is not a typo. KEY_PREFIX: `npm run audit` (audit/run-audit-cli.ts);
 * CRASH_AT, STALL_AT, THROW_AT and END_THREAD_AT: the fault points the e2e tests preload into a bot process
 * (test/e2e/fault-preload.mjs); SCREENSHOTS: the browser test, whose environment the sandbox it
 * starts inherits. src/config/environment-unknown-names.test.ts checks that every name the
 * repository reads is here or in the environment schema.
 */
export const READ_ELSEWHERE: readonly string[] = ['COUNTERSIGN_KEY_PREFIX', 'COUNTERSIGN_CRASH_AT', 'COUNTERSIGN_STALL_AT', 'COUNTERSIGN_THROW_AT', 'COUNTERSIGN_END_THREAD_AT', 'COUNTERSIGN_SCREENSHOTS'];

/** At most this many edits from a known name: a misspelling of it. */
const MAX_TYPO_DISTANCE = 2;

export interface UnknownVariables {
  /** One per variable a couple of edits from a known name: surely meant as that one. */
  problems: ConfigProblem[];
  /** The other unknown COUNTERSIGN_* names, for a warning at start-up. */
  ignored: string[];
}

/**
 * countersign.yml refuses an unknown key rather than silently keep a default; the environment does
 * the same for a misspelled COUNTERSIGN_* variable (COUNTERSIGN_REDIS_WAIT_REPLICA keeps the default
 * of 0 replicas, which is what lets a call run twice after a failover). An unknown name far from
 * every known one is only reported as ignored: the environment is shared with what else runs there,
 * and a Kubernetes Service named `countersign` gives every pod of its namespace
 * COUNTERSIGN_SERVICE_HOST, COUNTERSIGN_PORT and the like, which must not stop the bot.
 */
export function findUnknownVariables(env: Record<string, string | undefined>, read: readonly string[]): UnknownVariables {
  const known = [...read, ...READ_ELSEWHERE];
  const problems: ConfigProblem[] = [];
  const ignored: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!env[name]?.trim() || !name.toUpperCase().startsWith(PREFIX) || known.includes(name)) continue;
    const closest = closestName(name, known, MAX_TYPO_DISTANCE);
    if (closest === undefined) ignored.push(name);
    else problems.push({ field: name, message: `is not a countersign setting; did you mean ${closest}? Rename it (or unset it): as written it is ignored` });
  }
  return { problems, ignored };
}

/** The start-up warning for `ignored`. */
export function ignoredVariablesMessage(names: readonly string[]): string {
  return `countersign does not read ${names.join(', ')}: check the spelling against the README's list (a Kubernetes Service named countersign sets COUNTERSIGN_SERVICE_HOST, COUNTERSIGN_PORT and the like, which are expected here)`;
}
