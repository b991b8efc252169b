import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * What the bot's dependencies (the model, Slack's Web API, Redis) did, for an operator who must tell
 * "the bot is slow" from "the model is slow" and "Slack throttles us" from "Redis is down". Kept
 * apart from the approval metrics (`metrics.ts`) so each group can grow on its own.
 */
export interface OperationMetrics {
  /** One model call (one step of a turn) ended; tokens as the provider reported them. */
  modelCallFinished(options: { outcome: 'ok' | 'error'; durationMs: number; inputTokens?: number; outputTokens?: number }): void;
  /** A Slack Web API call failed: `error` is Slack's code (`channel_not_found`), `rate_limited` for a 429, `http_<status>`, `timeout` or `network`. */
  slackApiFailed(options: { method: string; error: string }): void;
  /** A Redis connection reported an error (`connection`) or a store command failed (`command`). */
  redisFailed(options: { kind: RedisFailureKind }): void;
}

export type RedisFailureKind = 'connection' | 'command';

export const noOperationMetrics: OperationMetrics = {
  modelCallFinished() {},
  slackApiFailed() {},
  redisFailed() {},
};

/** Seconds buckets for one model call: a short answer takes a second, a long one a minute or two. */
const MODEL_SECONDS = [0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300];

/** The Prometheus side of `OperationMetrics`, registered in `registry`. */
export function createPrometheusOperationMetrics(registry: Registry): OperationMetrics {
  const modelDuration = new Histogram({ name: 'countersign_model_call_duration_seconds', help: 'Model calls (one per step of a turn), by outcome (ok or error), from request to the last streamed token.', labelNames: ['outcome'], buckets: MODEL_SECONDS, registers: [registry] });
  const modelTokens = new Counter({ name: 'countersign_model_tokens_total', help: 'Tokens the model reported, by kind (input or output).', labelNames: ['kind'], registers: [registry] });
  const slackErrors = new Counter({ name: 'countersign_slack_api_errors_total', help: 'Failed Slack Web API responses, by method and error (Slack error code, rate_limited for HTTP 429, http_<status>, timeout, network).', labelNames: ['method', 'error'], registers: [registry] });
  const redisErrors = new Counter({ name: 'countersign_redis_errors_total', help: 'Redis errors, by kind (connection: a client reported an error; command: a store operation failed).', labelNames: ['kind'], registers: [registry] });
  return {
    modelCallFinished({ outcome, durationMs, inputTokens, outputTokens }) {
      modelDuration.observe({ outcome }, Math.max(0, durationMs) / 1000);
      if (inputTokens) modelTokens.inc({ kind: 'input' }, inputTokens);
      if (outputTokens) modelTokens.inc({ kind: 'output' }, outputTokens);
    },
    slackApiFailed: ({ method, error }) => slackErrors.inc({ method, error }),
    redisFailed: ({ kind }) => redisErrors.inc({ kind }),
  };
}
