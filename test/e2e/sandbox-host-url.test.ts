import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/start-sandbox.js';

/**
 * README: SANDBOX_HOST chooses where the page listens (and which Host it answers). With it set to
 * an address other than loopback's 127.0.0.1 (here 127.0.0.2, still loopback so the test needs no
 * network), `npm start` prints, and the bot's permalinks point to, that address: nothing listens
 * on localhost then.
 */
describe('the sandbox URL with SANDBOX_HOST', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ env: { SANDBOX_HOST: '127.0.0.2' }, port: 0, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it('the page is at the URL it prints', async () => {
    const direct = await fetch(`http://127.0.0.2:${sandbox.port}/`);
    expect(direct.status).toBe(200);
    // Printed as http://localhost:PORT it was refused (ECONNREFUSED).
    const printed = await fetch(sandbox.url).then((response) => response.status, (error: Error) => `${error.message}: ${String((error.cause as Error | undefined)?.message)}`);
    expect(printed).toBe(200);
  });
});
