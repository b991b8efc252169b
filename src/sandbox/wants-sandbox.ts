import { existsSync } from 'node:fs';
import { ENVIRONMENT_VARIABLES } from '../config/environment.js';
import { sandboxSourcePath } from './package-root.js';

/** How answers stream: a Slack variable the sandbox also honours (its default is `native`), so it says nothing of a Slack setup. */
const SANDBOX_SETTINGS = new Set(['SLACK_STREAMING']);
/**
 * The variables that set up a Slack connection: every `SLACK_` one the bot reads (the token, the
 * signing secret, the app token, the API URL, the bot's ids…), taken from the environment reader so
 * a new one counts too.
 */
const SLACK_SETUP_VARIABLES = ENVIRONMENT_VARIABLES.filter((name) => name.startsWith('SLACK_') && !SANDBOX_SETTINGS.has(name));

export interface WantsSandboxOptions {
  /** Whether this installation holds the sandbox page; default: its directory exists under src/. */
  sandboxInstalled?: () => boolean;
}

/**
 * Without Slack credentials, `npm start` runs the sandbox. Any Slack variable set means the person
 * is setting up Slack, and a missing one should be reported, not replaced by the sandbox. A module
 * of its own: the process entry asks this first, and only a sandbox run loads the sandbox.
 *
 * The sandbox is a trial run from a checkout. Where it cannot be one (NODE_ENV=production, as the
 * Docker image sets, or an installation without the sandbox page, like the image with no src/),
 * no Slack variable means a deployment whose environment did not arrive (a wrong --env-file, a
 * Secret's keys spelled differently): the entry then reports the missing variables by name.
 */
export function wantsSandbox(env: Record<string, string | undefined>, { sandboxInstalled = () => existsSync(sandboxSourcePath('web', 'public')) }: WantsSandboxOptions = {}): boolean {
  if (SLACK_SETUP_VARIABLES.some((name) => env[name]?.trim())) return false;
  return env.NODE_ENV?.trim() !== 'production' && sandboxInstalled();
}
