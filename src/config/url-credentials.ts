/**
 * A URL with `user:password@` puts a secret in the config file, where the headers' `${VAR}` would
 * read it from the environment; and Node's fetch refuses such a URL with an error that quotes it
 * whole, password included, into the logs and the notices posted to Slack. Shared by every URL the
 * config sends requests to (`http.bases[].url`, `mcpServers.<name>.url`).
 */
export function urlCredentialsProblem(url: URL): string | undefined {
  return url.username !== '' || url.password !== '' ? 'must not contain credentials; use headers with ${VAR} instead' : undefined;
}
