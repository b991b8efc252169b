import { createServer, type Server, type ServerResponse } from 'node:http';
import { closeConnectionsAtStop, PUBLIC_SERVER_TIMEOUTS } from '../http/close-server.js';
import type { StateStore, StoreRisk } from '../store/state-store.js';
import { WritesRefusedError } from '../store/writes-refused-error.js';

/** An answer to a plain HTTP GET, as data: written here, or handed to the thread that serves HTTP. */
export interface HttpReply {
  status: number;
  contentType: string;
  body: string;
}

/** What the health check asks of the store. */
export type HealthCheckedStore = Pick<StateStore, 'ping' | 'kind' | 'risks'>;

/**
 * The store as `/healthz` reads it, with the risks the rest of the process names beside its own:
 * the tool sources' (`mcp-exclude-matches-no-tool`: an MCP server whose tools are withheld). Like
 * the store's, they do not make the bot unhealthy, and are named even while the store's cannot be read.
 */
export function withOtherRisks(store: HealthCheckedStore, others: () => readonly StoreRisk[]): HealthCheckedStore {
  return {
    kind: store.kind,
    ping: () => store.ping(),
    risks: async () => [...(await store.risks().catch(() => [])), ...others()],
  };
}

/**
 * How long `/healthz` waits for the store before answering 503: a Redis that accepts the connection
 * and never answers (hung, paused, a black-holed route) would otherwise hold every probe open. Under
 * the Slack front's 3 s wait for the bot's thread, so behind the front too the reason names Redis.
 */
export const HEALTH_CHECK_TIMEOUT_MS = 2_500;

const TIMED_OUT = Symbol('timed out');

/**
 * `200` while the store answers and takes writes, `503` when it cannot be reached, does not answer within
 * `timeoutMs`, or takes no writes (a Redis left on a replica, or one that refuses writes: full under
 * `noeviction`, too few replicas for `min-replicas-to-write`; every write the bot makes fails there): what
 * a load balancer or orchestrator probes, on every port that serves it (the Slack front's, a worker's
 * `PORT`, `METRICS_PORT`, Socket Mode's).
 * The reason given is one of these fixed sentences: the error itself (addresses) is not for a public port.
 * A `200` names the store's risks by code (`warnings`, e.g. `redis-not-durable`; the start-up log says
 * what they mean), and those given beside them (`withOtherRisks`), each code once: they do not make
 * the bot unhealthy, but a dashboard should show them (left out if they are not read in time).
 */
export async function healthReply(store: HealthCheckedStore, options: { timeoutMs?: number } = {}): Promise<HttpReply> {
  const { timeoutMs = HEALTH_CHECK_TIMEOUT_MS } = options;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    // Timers run before the poll phase reads sockets: after the bot's own thread was busy past the limit
    // (a turn's synchronous work), a reply Redis sent meanwhile is read only after the timer. Yield once
    // (setImmediate runs after the poll) so it is, and blame Redis only if the store still has no answer.
    timer = setTimeout(() => setImmediate(resolve, TIMED_OUT), timeoutMs);
  });
  // A call still pending at the deadline is left to settle on its own (Promise.race handles its rejection).
  const inTime = <T>(work: Promise<T>) => Promise.race([work, deadline]);
  try {
    let timedOut: boolean;
    try {
      timedOut = (await inTime(store.ping())) === TIMED_OUT;
    } catch (error) {
      return failedReply(store, error);
    }
    if (timedOut) return jsonReply(503, { status: 'unavailable', store: store.kind, redis: 'down', reason: `Redis did not answer within ${timeoutMs / 1000} s` });
    // Kept by the store for a minute (no round trip per hit); an answer that failed or came late only leaves the warnings out.
    const risks = await inTime(store.risks().catch(() => []));
    const warnings = [...new Set((risks === TIMED_OUT ? [] : risks).map((risk) => risk.code))];
    return jsonReply(200, { status: 'ok', store: store.kind, redis: store.kind === 'redis' ? 'up' : 'not configured', ...(warnings.length > 0 ? { warnings } : {}) });
  } finally {
    clearTimeout(timer);
  }
}

function failedReply(store: HealthCheckedStore, error: unknown): HttpReply {
  if (error instanceof Error && /^READONLY\b/.test(error.message)) {
    return jsonReply(503, { status: 'unavailable', store: store.kind, redis: 'read-only', reason: 'Redis answers but takes no writes: it is a replica' });
  }
  if (error instanceof WritesRefusedError) {
    // Only the reply's code (OOM, NOREPLICAS, MISCONF…): the rest of Redis's message is not for a public port.
    return jsonReply(503, { status: 'unavailable', store: store.kind, redis: 'refuses-writes', reason: `Redis refuses writes: ${error.refusal}` });
  }
  return jsonReply(503, { status: 'unavailable', store: store.kind, redis: 'down', reason: 'Redis cannot be reached' });
}

/** The body of `GET /metrics` (Prometheus's text format). */
export type RenderMetrics = () => Promise<{ contentType: string; body: string }>;

export function metricsReply(render: RenderMetrics): Promise<HttpReply> {
  return render().then(
    ({ contentType, body }) => ({ status: 200, contentType, body }),
    () => jsonReply(500, { error: 'could not collect the metrics' }),
  );
}

export function answerHealthCheck(store: HealthCheckedStore, response: ServerResponse): void {
  void healthReply(store).then((reply) => writeReply(response, reply));
}

export function answerMetrics(render: RenderMetrics, response: ServerResponse): void {
  void metricsReply(render).then((reply) => writeReply(response, reply));
}

/**
 * An HTTP server of `GET /healthz` and, given `renderMetrics`, `GET /metrics`: a worker's `PORT` (it
 * serves no Slack requests), and the `METRICS_PORT` listener of every role. Anything else is a 404
 * that says what is served here.
 */
export function createHealthServer(options: { store: HealthCheckedStore; renderMetrics?: RenderMetrics; servedBy: string }): Server {
  const { store, renderMetrics, servedBy } = options;
  const served = renderMetrics ? 'GET /healthz and GET /metrics' : 'GET /healthz';
  // PORT in a worker, METRICS_PORT on every interface by default: reachable by more than the probes.
  return closeConnectionsAtStop(
    createServer(PUBLIC_SERVER_TIMEOUTS, (request, response) => {
      const path = request.url?.split('?')[0];
      if (request.method === 'GET' && path === '/healthz') return answerHealthCheck(store, response);
      if (renderMetrics && request.method === 'GET' && path === '/metrics') return answerMetrics(renderMetrics, response);
      writeReply(response, jsonReply(404, { error: `this is ${servedBy}: it serves only ${served}` }));
    }),
  );
}

function jsonReply(status: number, body: object): HttpReply {
  return { status, contentType: 'application/json', body: JSON.stringify(body) };
}

function writeReply(response: ServerResponse, reply: HttpReply): void {
  response.writeHead(reply.status, { 'content-type': reply.contentType });
  response.end(reply.body);
}
