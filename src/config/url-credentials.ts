/**
 * Whether a URL carries credentials (`https://user:password@host/`). countersign refuses them in
 * the URLs it sends requests to (`OPENAI_BASE_URL`, `http.bases[].url`, `mcpServers.<name>.url`):
 * undici's `request` drops them without a word, so they never authenticate, and Node's `fetch`
 * refuses such a URL with an error that quotes it whole, password and all, which would end up in a
 * log line or a thread's failure notice. A header (or the variable that becomes one) carries the
 * secret instead. A string that is no URL has none.
 */
export function hasUrlCredentials(url: URL | string): boolean {
  const parsed = typeof url === 'string' ? URL.parse(url) : url;
  return parsed !== null && (parsed.username !== '' || parsed.password !== '');
}

/** The config file's problem for such a URL: there the headers' `${VAR}` read the secret from the environment. */
export function urlCredentialsProblem(url: URL): string | undefined {
  return hasUrlCredentials(url) ? 'must not contain credentials; use headers with ${VAR} instead' : undefined;
}
