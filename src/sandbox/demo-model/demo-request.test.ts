import { describe, expect, it } from 'vitest';
import { parseDemoRequest } from './demo-request.js';

describe('parseDemoRequest', () => {
  it.each([
    ['restart the worker in staging', [{ kind: 'restart', service: 'worker', namespace: 'staging' }]],
    ['<@U0ALICE> says:\n<@U0COUNTERSIGN> please bounce api in production', [{ kind: 'restart', service: 'api', namespace: 'prod' }]],
    ['restart in prod', [{ kind: 'restart', namespace: 'prod' }]],
    ['scale api to 5 in prod', [{ kind: 'scale', deployment: 'api', replicas: 5, namespace: 'prod' }]],
    ['scale up the web deployment', [{ kind: 'scale', deployment: 'web' }]],
    ['deploy api 1.5.0 to staging', [{ kind: 'deploy', service: 'api', version: '1.5.0', namespace: 'staging' }]],
    ['deploy v2.0.0', [{ kind: 'deploy', version: '2.0.0' }]],
    ["what's running?", [{ kind: 'status' }]],
    ['status of prod in us-east-1', [{ kind: 'status', namespace: 'prod', region: 'us-east-1' }]],
    ['ask me which region', [{ kind: 'ask', about: 'region' }]],
    ['restart the worker, ask me which region', [{ kind: 'restart', service: 'worker' }, { kind: 'ask', about: 'region' }]],
    ['ask me which namespace to restart web in', [{ kind: 'ask', about: 'namespace' }, { kind: 'restart', service: 'web' }]],
    ['check the pods and then restart the worker in prod', [{ kind: 'status', namespace: 'prod' }, { kind: 'restart', service: 'worker', namespace: 'prod' }]],
    ['hello there', []],
  ])('reads %j', (text, intents) => {
    expect(parseDemoRequest(text)).toEqual(intents);
  });

  it('takes the replica count from "N replicas" too', () => {
    expect(parseDemoRequest('scale worker 4 replicas')).toEqual([{ kind: 'scale', deployment: 'worker', replicas: 4 }]);
  });
});
