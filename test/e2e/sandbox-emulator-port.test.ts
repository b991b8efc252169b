import { request } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/start-sandbox.js';
import { cardIn, sandboxPage, type SandboxPage } from './sandbox-page.js';

/**
 * The sandbox page's port refuses other sites and DNS-rebound names (own-page-requests.ts), and so
 * must the second HTTP server the sandbox runs on loopback: the Slack emulator's Web API, which the
 * page renders from. A web page could otherwise write to it with a CORS "simple" request
 * (text/plain, no preflight: the emulator reads any non-JSON body as a form) and a DNS-rebound page
 * could read it. Only the bot may call it: its per-start token, a loopback Host, no Origin.
 */
describe('the sandbox emulator port and other sites', () => {
  let sandbox: RunningSandbox;
  let page: SandboxPage;
  beforeAll(async () => {
    sandbox = await startSandbox({ env: {}, port: 0, logger: pino({ level: 'silent' }) });
    page = sandboxPage(`http://127.0.0.1:${sandbox.port}`);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  function raw(options: { path: string; headers: Record<string, string>; body: string }): Promise<{ status: number; text: string }> {
    const url = new URL(sandbox.emulator.url);
    return new Promise((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port: Number(url.port), method: 'POST', path: options.path, headers: options.headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      });
      outgoing.on('error', reject);
      outgoing.end(options.body);
    });
  }

  it('refuses a cross-site text/plain POST that rewrites the bot’s approval card (what any open web page can send)', async () => {
    const posted = await page.post('/api/messages', { user: 'U0ALICE', channel: 'C0OPS', text: '@countersign scale api to 5 in prod' });
    const threadTs = posted.body.ts as string;
    const card = await page.waitFor((snapshot) => cardIn(snapshot, threadTs), 'the approval card');
    const forged = [{ type: 'section', text: { type: 'mrkdwn', text: 'get_pods in staging (read-only, harmless)' } }, ...(card.blocks as any[]).filter((block) => block.type === 'actions')];
    const body = new URLSearchParams({ channel: 'C0OPS', ts: card.ts, text: 'harmless', blocks: JSON.stringify(forged) }).toString();
    const url = new URL(sandbox.emulator.url);
    const response = await fetch(`${sandbox.emulator.url}chat.update`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://evil.example', host: url.host },
      body,
    });
    const shown = (await page.state()).messages.find((message) => message.ts === card.ts);
    // Observed: 200 {"ok":true,...}; the page now shows bob a read-only card whose Approve still approves the prod scale.
    if (response.status === 200 && shown) {
      await page.click({ user: 'U0BOB', message: shown, actionId: 'countersign_approve' });
      const after = await page.waitFor((snapshot) => snapshot.messages.find((message) => message.ts === card.ts && !JSON.stringify(message.blocks).includes('harmless')), 'the bot redraws the card');
      // What bob's click on the "harmless" card did: it counted as his approval of scale_deployment in prod.
      expect(JSON.stringify(after.blocks)).toMatch(/scale_deployment[\s\S]*U0BOB|U0BOB[\s\S]*scale_deployment/);
    }
    expect(response.status).not.toBe(200);
    expect(JSON.stringify(shown?.blocks)).not.toContain('harmless');
  });

  it('refuses a call without the token generated for this start (the old fixed xoxb-sandbox included)', async () => {
    const posted = await page.post('/api/messages', { user: 'U0ALICE', channel: 'C0OPS', text: 'nothing to see' });
    const url = new URL(sandbox.emulator.url);
    const answers = [];
    for (const token of [undefined, 'xoxb-sandbox']) {
      const response = await raw({
        path: '/api/chat.postMessage',
        headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ channel: 'C0OPS', thread_ts: posted.body.ts as string, text: 'forged by a stranger', ...(token ? { token } : {}) }).toString(),
      });
      answers.push(JSON.parse(response.text).error);
    }
    expect(answers).toEqual(['not_authed', 'invalid_auth']);
    expect((await page.state()).messages.map((message) => message.text)).not.toContain('forged by a stranger');
  });

  it('refuses a DNS-rebound Host reading the thread back (conversations.replies)', async () => {
    const posted = await page.post('/api/messages', { user: 'U0ALICE', channel: 'C0OPS', text: 'secret plans for the weekend' });
    const response = await raw({
      path: '/api/conversations.replies',
      headers: { host: 'rebind.evil.example:80', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ channel: 'C0OPS', ts: posted.body.ts as string }).toString(),
    });
    // Observed: 200 with the thread's messages.
    expect(response.text).not.toContain('secret plans');
  });
});
