/**
 * Where the bot's Redis is, read from one `REDIS_URL`:
 * - `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS): one server;
 * - `redis+cluster://[user:password@]host:port[,host:port…]` (or `rediss+cluster://`): a Redis
 *   Cluster, any reachable nodes as seeds;
 * - `redis+sentinel://[user:password@]host:port[,host:port…]/primary-name[/db]` (or
 *   `rediss+sentinel://`, TLS to the sentinels and the servers): a primary watched by Sentinel.
 *   `?sentinelUsername=…&sentinelPassword=…` when the sentinels have credentials of their own.
 * One variable keeps every consumer (the bot, `npm run audit`, the sandbox) on one setting.
 */
export interface RedisEndpoint {
  host: string;
  port: number;
}

interface Credentials {
  tls: boolean;
  username?: string;
  password?: string;
}

export type RedisTarget =
  | { kind: 'standalone'; url: string }
  | ({ kind: 'cluster'; nodes: RedisEndpoint[] } & Credentials)
  | ({ kind: 'sentinel'; sentinels: RedisEndpoint[]; name: string; db?: number; sentinelUsername?: string; sentinelPassword?: string } & Credentials);

export const REDIS_URL_FORMS = 'redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://';

const MULTI_HOST = /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/?#]*)@)?([^/?#]+)(\/[^?#]*)?(?:\?([^#]*))?$/i;
const DEFAULT_PORT = { cluster: 6379, sentinel: 26379 } as const;

/** The target, or a message (without the value: it may hold a password) saying what is wrong. */
export function parseRedisTarget(value: string): RedisTarget | { problem: string } {
  try {
    return parseTarget(value);
  } catch {
    // decodeURIComponent on a stray `%`.
    return { problem: 'has a malformed percent-encoding (encode special characters in the password as %XX)' };
  }
}

function parseTarget(value: string): RedisTarget | { problem: string } {
  const match = MULTI_HOST.exec(value);
  if (match === null) {
    const url = URL.parse(value);
    if (url === null || !['redis:', 'rediss:'].includes(url.protocol)) return { problem: `must be a URL starting with ${REDIS_URL_FORMS}` };
    // ioredis decodes these credentials when the client is made, where a stray `%` stops the start-up
    // with "URI malformed", naming neither the variable nor the fix: decoded here as for the other forms.
    parseUserInfo(`${url.username}:${url.password}`);
    return { kind: 'standalone', url: value };
  }
  const [, scheme = '', kind = '', userInfo, hostList = '', path = '', query = ''] = match;
  const mode = kind.toLowerCase() as 'cluster' | 'sentinel';
  const endpoints: RedisEndpoint[] = [];
  for (const entry of hostList.split(',')) {
    const endpoint = parseEndpoint(entry.trim(), DEFAULT_PORT[mode]);
    if (endpoint === undefined) return { problem: `has a host that is not host or host:port (port 1-65535) in its ${mode === 'cluster' ? 'node' : 'sentinel'} list` };
    endpoints.push(endpoint);
  }
  const credentials: Credentials = { tls: scheme.toLowerCase() === 'rediss', ...parseUserInfo(userInfo) };
  const parameters = new URLSearchParams(query);
  const segments = path.split('/').filter((segment) => segment !== '');
  if (mode === 'cluster') {
    if (segments.length > 0) return { problem: 'must not name a database in cluster mode (a Redis Cluster has only database 0)' };
    if (parameters.size > 0) return { problem: 'takes no query parameters in cluster mode' };
    return { kind: 'cluster', nodes: endpoints, ...credentials };
  }
  const [name, dbText, ...extra] = segments.map(decodeURIComponent);
  if (name === undefined || extra.length > 0) return { problem: 'must name the primary after the sentinels: redis+sentinel://host:26379/mymaster[/db]' };
  const db = dbText === undefined ? undefined : Number(dbText);
  if (db !== undefined && !(Number.isInteger(db) && db >= 0)) return { problem: 'has a database that is not a whole number' };
  for (const key of parameters.keys()) if (key !== 'sentinelUsername' && key !== 'sentinelPassword') return { problem: `has an unknown query parameter ${JSON.stringify(key)} (sentinelUsername and sentinelPassword are known)` };
  const sentinelUsername = parameters.get('sentinelUsername') ?? undefined;
  const sentinelPassword = parameters.get('sentinelPassword') ?? undefined;
  return {
    kind: 'sentinel',
    sentinels: endpoints,
    name,
    ...(db !== undefined && { db }),
    ...(sentinelUsername !== undefined && { sentinelUsername }),
    ...(sentinelPassword !== undefined && { sentinelPassword }),
    ...credentials,
  };
}

/** A target with its secrets replaced, safe to log. */
export function describeRedisTarget(target: RedisTarget): Record<string, unknown> {
  if (target.kind === 'standalone') {
    const url = URL.parse(target.url);
    return { kind: 'standalone', host: url?.host, tls: url?.protocol === 'rediss:', username: url?.username || undefined, password: url?.password ? '[set]' : undefined };
  }
  const common = { tls: target.tls, username: target.username, password: target.password === undefined ? undefined : '[set]' };
  if (target.kind === 'cluster') return { kind: 'cluster', nodes: target.nodes.map(hostPort), ...common };
  return { kind: 'sentinel', sentinels: target.sentinels.map(hostPort), name: target.name, db: target.db, ...common, sentinelPassword: target.sentinelPassword === undefined ? undefined : '[set]' };
}

const hostPort = ({ host, port }: RedisEndpoint) => `${host}:${port}`;

function parseEndpoint(entry: string, defaultPort: number): RedisEndpoint | undefined {
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/i.exec(entry);
  const plain = /^([A-Za-z0-9_.-]+)(?::(\d+))?$/.exec(entry);
  const parts = bracketed ?? plain;
  if (parts === null || parts[1] === undefined) return undefined;
  const port = parts[2] === undefined ? defaultPort : Number(parts[2]);
  if (!(Number.isInteger(port) && port >= 1 && port <= 65_535)) return undefined;
  return { host: parts[1], port };
}

function parseUserInfo(userInfo: string | undefined): { username?: string; password?: string } {
  if (userInfo === undefined || userInfo === '') return {};
  const cut = userInfo.indexOf(':');
  const username = decodeURIComponent(cut === -1 ? userInfo : userInfo.slice(0, cut));
  const password = cut === -1 ? undefined : decodeURIComponent(userInfo.slice(cut + 1));
  // `redis+cluster://:secret@host` is the password-only (requirepass) form, as in redis:// URLs.
  return { ...(username !== '' && { username }), ...(password !== undefined && password !== '' && { password }) };
}
