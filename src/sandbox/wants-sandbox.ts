/**
 * Without Slack credentials, `npm start` runs the sandbox. Any Slack variable set means the person
 * is setting up Slack, and a missing one should be reported, not replaced by the sandbox. A module
 * of its own: the process entry asks this first, and only a sandbox run loads the sandbox.
 */
export function wantsSandbox(env: Record<string, string | undefined>): boolean {
  return ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET'].every((name) => !env[name]?.trim());
}
