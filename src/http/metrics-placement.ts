import type { EnvironmentConfig } from '../config/environment.js';

/**
 * Where `GET /metrics` is served. `own-port`: on a listener of its own (`METRICS_PORT`), beside a copy
 * of `/healthz` for probes. `main-port`: on `PORT`, beside `/healthz`. `off`: nowhere.
 */
export type MetricsPlacement = { kind: 'own-port'; port: number; host?: string } | { kind: 'main-port' } | { kind: 'off' };

/**
 * `PORT` of a process that takes Slack's HTTP requests must be reachable from the internet, and
 * `/metrics` there would give anyone the tool and rule names, the pending approvals and the process's
 * figures, and a cheap way to load the bot (each scrape reads the open steps from Redis). So it is
 * served there only when asked for by name (`METRICS_PORT` equal to `PORT`). A worker or a Socket Mode
 * process takes no request from Slack: its `PORT` is the operator's own, as before.
 */
export function metricsPlacement(environment: Pick<EnvironmentConfig, 'role' | 'slack' | 'metrics'>): MetricsPlacement {
  const { port, host } = environment.metrics ?? {};
  if (port !== undefined && port !== environment.slack.port) return { kind: 'own-port', port, ...(host === undefined ? {} : { host }) };
  if (port !== undefined || !takesSlackRequests(environment)) return { kind: 'main-port' };
  return { kind: 'off' };
}

function takesSlackRequests(environment: Pick<EnvironmentConfig, 'role' | 'slack'>): boolean {
  return environment.role !== 'worker' && !environment.slack.socketMode;
}

/** For the start-up log line: where an operator's Prometheus finds the metrics. */
export function describeMetricsPlacement(placement: MetricsPlacement, boundPort?: number): string {
  if (placement.kind === 'own-port') return `METRICS_PORT ${boundPort ?? placement.port}`;
  return placement.kind === 'main-port' ? 'PORT' : 'off';
}

/**
 * What the start-up log says beside where the metrics are: why they are off (info: the safe default
 * of a process Slack posts to), or that they are on a port Slack posts to (a warning).
 */
export function metricsPlacementNotice(placement: MetricsPlacement, environment: Pick<EnvironmentConfig, 'role' | 'slack'>): { level: 'info' | 'warn'; message: string } | undefined {
  if (placement.kind === 'off') {
    return { level: 'info', message: "GET /metrics is not served: PORT takes Slack's requests from the internet. Set METRICS_PORT to serve it on a port of its own" };
  }
  if (placement.kind === 'main-port' && takesSlackRequests(environment)) {
    return { level: 'warn', message: "GET /metrics is served on PORT, which takes Slack's requests (METRICS_PORT equals PORT): keep /metrics out of what the internet reaches" };
  }
  return undefined;
}
