import { describe, expect, it } from 'vitest';
import { createRequestsInFlight } from './requests-in-flight.js';
import { deferred } from '../../test/helpers/deferred.js';

/** Runs the middleware for one request whose listeners return when `listenersDone` resolves. */
function request(requests: ReturnType<typeof createRequestsInFlight>, listenersDone: Promise<void>): Promise<void> {
  return (requests.middleware as unknown as (args: { next: () => Promise<void> }) => Promise<void>)({ next: () => listenersDone });
}

describe('Slack requests in flight', () => {
  it('settles once the last running request has returned from its listeners', async () => {
    const requests = createRequestsInFlight();
    const first = deferred();
    const second = deferred();
    const handled = [request(requests, first.promise), request(requests, second.promise)];
    const settled = requests.settled({ timeoutMs: 60_000 });
    first.resolve();
    await handled[0];
    expect(requests.count()).toBe(1);
    second.resolve();
    expect(await settled).toBe('settled');
    expect(await requests.settled({ timeoutMs: 60_000 })).toBe('settled');
  });

  it('counts a request whose listener failed as done', async () => {
    const requests = createRequestsInFlight();
    await expect(request(requests, Promise.reject(new Error('listener failed')))).rejects.toThrow('listener failed');
    expect(requests.count()).toBe(0);
  });

  it('gives up after its bound while a request still runs (a store that is away)', async () => {
    const requests = createRequestsInFlight();
    const stuck = deferred();
    const handled = request(requests, stuck.promise);
    expect(await requests.settled({ timeoutMs: 10 })).toBe('timed-out');
    stuck.resolve();
    await handled;
  });
});
