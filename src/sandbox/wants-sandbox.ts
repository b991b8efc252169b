import { existsSync } from 'node:fs';
import { sandboxSourcePath } from './package-root.js';

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
  if (!['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET'].every((name) => !env[name]?.trim())) return false;
  return env.NODE_ENV?.trim() !== 'production' && sandboxInstalled();
}
