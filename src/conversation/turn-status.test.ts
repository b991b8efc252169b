import { describe, expect, it } from 'vitest';
import { createTurnStatus } from './turn-status.js';

const where = { channel: 'C1', threadTs: '1.0' };

/** A messenger whose status calls settle only when the test says so. */
function holdingMessenger() {
  const calls: Array<{ status: string; settle: () => void }> = [];
  const waiting: Array<() => void> = [];
  return {
    calls,
    /** Resolves once `count` status calls were made. */
    callsMade: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (calls.length >= count ? resolve() : waiting.push(check));
        check();
      }),
    setStatus: ({ status }: { status: string }) =>
      new Promise<void>((resolve) => {
        calls.push({ status, settle: resolve });
        for (const check of waiting.splice(0)) check();
      }),
  };
}

describe('turn status', () => {
  it('shows nothing for a turn that ends before the delay', async () => {
    const messenger = holdingMessenger();
    const status = createTurnStatus({ messenger, where, delayMs: 60_000 });
    status.show('is thinking…');
    status.show('is running get_pods…');
    await status.end();
    expect(messenger.calls).toEqual([]);
  });

  it('shows the latest status once the delay passed, later ones in order, and none after the end', async () => {
    const messenger = holdingMessenger();
    const status = createTurnStatus({ messenger, where, delayMs: 0 });
    status.show('is thinking…');
    await messenger.callsMade(1);
    status.show('is running get_pods…');
    messenger.calls[0]!.settle();
    await messenger.callsMade(2);
    expect(messenger.calls.map((call) => call.status)).toEqual(['is thinking…', 'is running get_pods…']);

    // The end waits for the status on its way, so the answer is posted after it.
    let ended = false;
    const ending = status.end().then(() => {
      ended = true;
    });
    status.show('is running restart_service…');
    await Promise.resolve();
    expect(ended).toBe(false);
    messenger.calls[1]!.settle();
    await ending;
    expect(messenger.calls.map((call) => call.status)).toEqual(['is thinking…', 'is running get_pods…']);
  });

  it('shows the status a turn reached when the delay passes, not the ones before it', async () => {
    const messenger = holdingMessenger();
    const status = createTurnStatus({ messenger, where, delayMs: 20 });
    status.show('is thinking…');
    status.show('is running get_pods…');
    await messenger.callsMade(1);
    messenger.calls[0]!.settle();
    await status.end();
    expect(messenger.calls.map((call) => call.status)).toEqual(['is running get_pods…']);
  });

  it('keeps going when Slack refuses a status', async () => {
    let attempts = 0;
    const status = createTurnStatus({
      messenger: {
        setStatus: async () => {
          attempts += 1;
          throw new Error('missing_scope');
        },
      },
      where,
      delayMs: 0,
    });
    status.show('is thinking…');
    await new Promise((resolve) => setTimeout(resolve, 5));
    status.show('is running get_pods…');
    await status.end();
    expect(attempts).toBe(2);
  });

  it('does not hold the answer back for a status call that does not land: the end waits for it only so long', async () => {
    const messenger = holdingMessenger();
    const status = createTurnStatus({ messenger, where, delayMs: 0, endWaitMs: 20 });
    status.show('is thinking…');
    await messenger.callsMade(1);
    // Never settled (Slack slow, or its client waiting out a rate limit): the end comes all the same.
    await status.end();
    expect(messenger.calls.map((call) => call.status)).toEqual(['is thinking…']);
  });
});
