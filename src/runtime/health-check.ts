import { createServer, type Server, type ServerResponse } from 'node:http';
import type { StateStore } from '../store/state-store.js';

/** `200` while the store answers, `503` when it cannot be reached: what a load balancer or orchestrator probes. */
export function answerHealthCheck(store: Pick<StateStore, 'ping' | 'kind'>, response: ServerResponse): void {
  store.ping().then(
    () => respondJson(response, 200, { status: 'ok', store: store.kind, redis: store.kind === 'redis' ? 'up' : 'not configured' }),
    () => respondJson(response, 503, { status: 'unavailable', store: store.kind, redis: 'down' }),
  );
}

/** The body of `GET /metrics` (Prometheus's text format). */
export type RenderMetrics = () => Promise<{ contentType: string; body: string }>;

export function answerMetrics(render: RenderMetrics, response: ServerResponse): void {
  render().then(
    ({ contentType, body }) => {
      response.writeHead(200, { 'content-type': contentType });
      response.end(body);
    },
    () => respondJson(response, 500, { error: 'could not collect the metrics' }),
  );
}

/** A worker serves no Slack requests; it answers only `GET /healthz` and `GET /metrics`. */
export function createHealthServer(store: Pick<StateStore, 'ping' | 'kind'>, renderMetrics: RenderMetrics): Server {
  return createServer((request, response) => {
    const path = request.url?.split('?')[0];
    if (request.method === 'GET' && path === '/healthz') return answerHealthCheck(store, response);
    if (request.method === 'GET' && path === '/metrics') return answerMetrics(renderMetrics, response);
    respondJson(response, 404, { error: 'this process is a countersign worker: it serves only GET /healthz and GET /metrics' });
  });
}

function respondJson(response: ServerResponse, status: number, body: object): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
