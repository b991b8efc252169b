import { describe, expect, it } from 'vitest';
import { createAdmissionGate } from './admission-gate.js';

describe('admission gate', () => {
  it('gives up a waiting place when its signal aborts, so the room goes to the next one', async () => {
    const gate = createAdmissionGate({ maxConcurrent: 1, loaded: () => false });
    const holder = await gate.acquire();
    const controller = new AbortController();
    const aborted = gate.acquire(controller.signal);
    const next = gate.acquire();
    controller.abort(new Error('the bot is stopping'));
    await expect(aborted).rejects.toThrow('the bot is stopping');
    expect(gate.waiting()).toBe(1);
    holder();
    (await next)();
    expect(gate.active()).toBe(0);
  });

  it('refuses at once a signal already aborted, taking no place', async () => {
    const gate = createAdmissionGate({ maxConcurrent: 1, loaded: () => false });
    await expect(gate.acquire(AbortSignal.abort(new Error('too late')))).rejects.toThrow('too late');
    expect([gate.active(), gate.waiting()]).toEqual([0, 0]);
  });
});
