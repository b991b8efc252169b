import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHealthServer, type HealthCheckedStore, type RenderMetrics } from '../runtime/health-check.js';

/**
 * The METRICS_PORT listener: `GET /metrics`, and `GET /healthz` for the probes that reach this port
 * and not the one Slack posts to. Resolves once it listens; a port it cannot take fails the start
 * with the variable's name in the message.
 */
export async function startMetricsServer(options: {
  store: HealthCheckedStore;
  renderMetrics: RenderMetrics;
  port: number;
  /** Default: every interface, so a scraper in the pod's network (Prometheus on the pod IP) reaches it. */
  host?: string;
}): Promise<{ server: Server; port: number }> {
  const server = createHealthServer({ store: options.store, renderMetrics: options.renderMetrics, servedBy: "countersign's metrics port" });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: Error) => reject(new Error(`could not listen on METRICS_PORT ${options.port}${options.host === undefined ? '' : ` (METRICS_HOST ${options.host})`}: ${error.message}`, { cause: error })));
    server.listen(options.port, options.host, resolve);
  });
  return { server, port: (server.address() as AddressInfo).port };
}
