import { request } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxSnapshot } from '../sandbox-api.js';
import { startSandbox, type RunningSandbox } from '../start-sandbox.js';

/**
 * The sandbox binds 127.0.0.1, but a web page the developer has open in the same browser can still
 * send it requests (a text/plain POST is a CORS "simple" request: no preflight), and a DNS-rebound
 * name reaches it with a foreign Host header. Whoever reaches the API acts as any sandbox user
 * (README), so only the sandbox's own page is answered.
 */
describe('the sandbox server and requests from other sites', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ env: {}, port: 0, logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** A raw request to the sandbox's loopback port, with whatever Host and Origin a browser would send. */
  function send(options: { method?: string; path: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port: sandbox.port, method: options.method ?? 'GET', path: options.path, headers: options.headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(options.body);
    });
  }
  const own = () => `localhost:${sandbox.port}`;
  const mention = JSON.stringify({ user: 'U0ALICE', channel: 'C0OPS', text: '@countersign restart the worker in staging' });
  const messageTexts = () => sandbox.emulator.state.messages.all().map((message) => message.text);

  it('refuses a text/plain POST from another site (what any web page can send without a preflight); nothing is posted as @alice', async () => {
    const before = messageTexts();
    const response = await fetch(`http://127.0.0.1:${sandbox.port}/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://evil.example' },
      body: mention,
    });
    // Before the fix: 200 {"ok":true,"ts":…}, the message delivered to the bot as @alice.
    expect({ status: response.status, text: await response.text() }).toEqual({ status: 403, text: 'the sandbox answers only its own page, not other sites\n' });
    expect(messageTexts()).toEqual(before);
  });

  it('refuses a POST that is not application/json even without an Origin (415)', async () => {
    const response = await send({ method: 'POST', path: '/api/commands', headers: { host: own(), 'content-type': 'text/plain' }, body: JSON.stringify({ user: 'U0ALICE', channel: 'C0OPS', command: '/countersign', text: 'pending' }) });
    expect(response).toEqual({ status: 415, text: JSON.stringify({ ok: false, error: 'body: send it as content-type: application/json' }) });
  });

  it('refuses a request whose Host is not the loopback address it serves (DNS rebinding): no snapshot, no step ids', async () => {
    const response = await send({ path: '/api/state', headers: { host: `rebind.evil.example:${sandbox.port}` } });
    // Before the fix: 200 with the whole workspace snapshot (messages, cards, step ids to click).
    expect(response.status).toBe(421);
    expect(response.text).not.toContain('"messages"');
  });

  it('answers the page itself: its snapshot and its JSON POSTs, under localhost and 127.0.0.1', async () => {
    const state = await send({ path: '/api/state', headers: { host: own() } });
    expect(state.status).toBe(200);
    expect((JSON.parse(state.text) as SandboxSnapshot).workspace.botUserId).toBe('U0COUNTERSIGN');
    const posted = await send({
      method: 'POST',
      path: '/api/messages',
      headers: { host: `127.0.0.1:${sandbox.port}`, origin: `http://127.0.0.1:${sandbox.port}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'U0ALICE', channel: 'C0OPS', text: 'hello from the page' }),
    });
    expect(posted.status).toBe(200);
    expect(messageTexts()).toContain('hello from the page');
  });
});
