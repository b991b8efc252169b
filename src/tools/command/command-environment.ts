/**
 * The environment a command runs with: the bot's own, minus the secrets the bot holds. A command
 * tool exists to run one fixed program, and anything it prints goes to the model and the Slack
 * thread, so it must not be able to read (or leak via `env`) the bot's Slack or OpenAI tokens, nor
 * a variable the config reads with `${VAR}` for another tool source (`withholding`).
 */

const BOT_SECRETS = new Set(['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_APP_TOKEN', 'OPENAI_API_KEY', 'REDIS_URL']);
// Case-insensitive: `github_token` is as secret as `GITHUB_TOKEN`.
const SECRET_SUFFIX = /_(TOKEN|SECRET|KEY|PASSWORD)$/i;

export function isSecretVariableName(name: string): boolean {
  return BOT_SECRETS.has(name.toUpperCase()) || SECRET_SUFFIX.test(name);
}

/**
 * `parentEnvironment` (default `process.env`) without secrets, then `environment` on top: a
 * variable passed explicitly is kept even if its name looks secret, and `undefined` removes one.
 */
export function commandEnvironment({
  parentEnvironment = process.env,
  environment = {},
}: {
  parentEnvironment?: Record<string, string | undefined>;
  environment?: Record<string, string | undefined>;
} = {}): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(parentEnvironment)) {
    if (value !== undefined && !isSecretVariableName(name)) result[name] = value;
  }
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

/**
 * `environment` that also removes `names` from what is inherited: the variables the config reads as
 * secrets (`config-secrets.ts`) are not secret-looking by name, so `commandEnvironment` alone would
 * pass them on. A value `environment` sets for one of them is kept: that source asked for it.
 */
export function withholding(names: Iterable<string>, environment: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { ...Object.fromEntries([...names].map((name) => [name, undefined])), ...environment };
}
