/** Shorter values are not scrubbed: they would match ordinary text. */
const MIN_SECRET_LENGTH = 8;

/**
 * Replaces every known secret value (the bot's tokens, its signing secret, the model's API key,
 * the Redis password) in a written log line, wherever it ended up: the error serializer drops what
 * libraries attach, but a message can still quote a value. Each is matched as written and as JSON
 * escapes it. Undefined when there is nothing to scrub.
 */
export function createSecretScrubber(secrets: readonly (string | undefined)[]): ((line: string) => string) | undefined {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  if (forms.size === 0) return undefined;
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  return (line) => {
    let scrubbed = line;
    for (const form of ordered) if (scrubbed.includes(form)) scrubbed = scrubbed.replaceAll(form, '[redacted]');
    return scrubbed;
  };
}
