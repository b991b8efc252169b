import type { IncomingHttpHeaders } from 'node:http';

export interface Refusal {
  status: number;
  message: string;
}

/** Binding every interface names no host a browser would use; only the loopback names apply then. */
export const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]']);
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const DEFAULT_HTTP_PORT = 80;

/** The Host headers a browser sends for the sandbox page on `port`: loopback names and the configured host. */
export function ownHosts(options: { port: number; configuredHost?: string }): Set<string> {
  const configured = options.configuredHost?.trim().toLowerCase() ?? '';
  const names = WILDCARD_HOSTS.has(configured) ? LOOPBACK_NAMES : [...LOOPBACK_NAMES, bracketIpv6(configured)];
  // Browsers leave out the default port.
  return new Set(names.flatMap((name) => (options.port === DEFAULT_HTTP_PORT ? [`${name}:${options.port}`, name] : [`${name}:${options.port}`])));
}

/**
 * Why a request does not come from the sandbox's own page (undefined when it does).
 *
 * Binding 127.0.0.1 keeps other machines out, not other web pages: any site open in the developer's
 * browser can send requests to the sandbox, and a DNS-rebound name (rebind.evil.example resolving to
 * 127.0.0.1) even reads the answers. Whoever reaches the API acts as any sandbox user, so only the
 * sandbox's own page may: the Host must be a name the sandbox is served under (a rebound name is not),
 * and a present Origin must be that page's own (a cross-site POST always carries one). The JSON
 * content type the API demands (api-routes.ts) makes a cross-site POST need a preflight, which this
 * server never answers.
 */
export function refuseForeignRequest(options: { headers: IncomingHttpHeaders; ownHosts: Set<string> }): Refusal | undefined {
  const host = options.headers.host?.toLowerCase();
  if (host === undefined || !options.ownHosts.has(host)) return { status: 421, message: 'the sandbox answers only to its own address (127.0.0.1, localhost or SANDBOX_HOST)' };
  const origin = options.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${host}`) return { status: 403, message: 'the sandbox answers only its own page, not other sites' };
  return undefined;
}

export function bracketIpv6(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
