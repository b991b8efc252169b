import { createServer, type Server, type ServerResponse } from 'node:http';
import type { StateStore } from '../store/state-store.js';

/** `200` while the store answers, `503` when it cannot be reached: what a load balancer or orchestrator probes. */
export function answerHealthCheck(store: Pick<StateStore, 'ping' | 'kind'>, response: ServerResponse): void {
  store.ping().then(
    () => respondJson(response, 200, { status: 'ok', store: store.kind, redis: store.kind === 'redis' ? 'up' : 'not configured' }),
    () => respondJson(response, 503, { status: 'unavailable', store: store.kind, redis: 'down' }),
  );
}

/** A worker serves no Slack requests; it answers only `GET /healthz`. */
export function createHealthServer(store: Pick<StateStore, 'ping' | 'kind'>): Server {
  return createServer((request, response) => {
    if (request.method === 'GET' && request.url?.split('?')[0] === '/healthz') return answerHealthCheck(store, response);
    respondJson(response, 404, { error: 'this process is a countersign worker: it serves only GET /healthz' });
  });
}

function respondJson(response: ServerResponse, status: number, body: object): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
