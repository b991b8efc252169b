import { describe, expect, it } from 'vitest';
import { parseEnvironment } from '../config/environment.js';
import { metricsPlacement, metricsPlacementNotice } from './metrics-placement.js';

const HTTP = { SLACK_BOT_TOKEN: 'xoxb-token', SLACK_SIGNING_SECRET: 'secret', OPENAI_API_KEY: 'sk-key', REDIS_URL: 'redis://redis:6379' };
const placed = (variables: Record<string, string>) => {
  const environment = parseEnvironment({ ...HTTP, ...variables }, { fileExists: () => false });
  const placement = metricsPlacement(environment);
  return { placement, notice: metricsPlacementNotice(placement, environment)?.level };
};

describe('metricsPlacement', () => {
  it('keeps /metrics off the port Slack posts to unless METRICS_PORT names it', () => {
    expect(placed({})).toEqual({ placement: { kind: 'off' }, notice: 'info' });
    expect(placed({ COUNTERSIGN_ROLE: 'receiver' })).toEqual({ placement: { kind: 'off' }, notice: 'info' });
    expect(placed({ COUNTERSIGN_SLACK_FRONT: 'inline' })).toEqual({ placement: { kind: 'off' }, notice: 'info' });
    expect(placed({ METRICS_PORT: '9464' })).toEqual({ placement: { kind: 'own-port', port: 9464 }, notice: undefined });
    expect(placed({ METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1' }).placement).toEqual({ kind: 'own-port', port: 9464, host: '127.0.0.1' });
    expect(placed({ PORT: '8080', METRICS_PORT: '8080' })).toEqual({ placement: { kind: 'main-port' }, notice: 'warn' });
  });

  it('serves it on PORT where Slack posts nothing (a worker, Socket Mode), or on METRICS_PORT when set', () => {
    expect(placed({ COUNTERSIGN_ROLE: 'worker' })).toEqual({ placement: { kind: 'main-port' }, notice: undefined });
    expect(placed({ SLACK_APP_TOKEN: 'xapp-token' })).toEqual({ placement: { kind: 'main-port' }, notice: undefined });
    expect(placed({ COUNTERSIGN_ROLE: 'worker', METRICS_PORT: '9464' }).placement).toEqual({ kind: 'own-port', port: 9464 });
  });
});
