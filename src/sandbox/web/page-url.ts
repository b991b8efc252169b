import { bracketIpv6, WILDCARD_HOSTS } from './own-page-requests.js';

/** Loopback names `localhost` reaches: the page bound to one of them is at `localhost`. */
const LOCALHOST_ADDRESSES = new Set(['127.0.0.1', 'localhost']);

/**
 * The address the page is reached at when bound to `host` (SANDBOX_HOST): `localhost` for the
 * default loopback address or every interface, otherwise the host itself, since nothing listens on
 * localhost then.
 */
export function pageUrl(options: { host: string; port: number }): string {
  const host = options.host.trim().toLowerCase();
  const name = WILDCARD_HOSTS.has(host) || LOCALHOST_ADDRESSES.has(host) ? 'localhost' : bracketIpv6(host);
  return `http://${name}:${options.port}`;
}
