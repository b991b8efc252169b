/**
 * The oldest Node.js countersign runs on: 22.19, because its HTTP client (undici, under the Slack
 * and OpenAI libraries) needs it. Keep in step with `engines` in package.json and `.nvmrc`.
 */
export const MINIMUM_NODE_VERSION = { major: 22, minor: 19 } as const;

/** What `.nvmrc` and the Dockerfile pin: the current LTS, on which a click costs the bot less CPU. */
export const RECOMMENDED_NODE_MAJOR = 24;

/**
 * What to tell someone running countersign on a Node.js that is too old, or undefined when
 * `version` (as in `process.versions.node`, e.g. `20.11.1`) is new enough. An unreadable version
 * is let through: refusing to start over a string we failed to parse would be worse than trying.
 */
export function nodeVersionProblem(version: string): string | undefined {
  const match = /^v?(\d+)\.(\d+)\./.exec(version);
  if (match === null) return undefined;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  const { major: neededMajor, minor: neededMinor } = MINIMUM_NODE_VERSION;
  if (major > neededMajor || (major === neededMajor && minor >= neededMinor)) return undefined;
  // Someone on 20 needs to hear "22"; only someone already on an early 22 needs the minor version.
  const needed = major < neededMajor ? `${neededMajor}` : `${neededMajor}.${neededMinor}`;
  return [
    `countersign needs Node.js ${needed} or newer (found v${version.replace(/^v/, '')}).`,
    `Install Node.js ${RECOMMENDED_NODE_MAJOR} (with nvm: \`nvm install\` in this folder reads .nvmrc) and run it again.`,
  ].join('\n');
}
