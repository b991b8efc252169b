import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pino } from 'pino';
import { parseConfigFile } from '../../src/config/config-file.js';
import type { SandboxSnapshot } from '../../src/sandbox/sandbox-api.js';
import { SANDBOX_KEY_PREFIX, startSandbox, type RunningSandbox } from '../../src/sandbox/start-sandbox.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { fillForm } from './fill-form.js';
import { readInvocations, recordingToolsYaml } from './harness.js';
import { cardIn, repliesIn, sandboxPage, viewOf, type SandboxPage } from './sandbox-page.js';

/**
 * The sandbox as a newcomer uses it: the page's API in front of the Slack emulator and the real bot
 * (createBot, Bolt's HTTP receiver, signed requests). The model is the real OpenAI provider talking
 * to a loopback fake, so every answer is scripted.
 */
const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
const OPS = 'C0OPS';
const RESTART = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('the sandbox, driven through its page API', () => {
  let openai: FakeOpenAI;
  let sandbox: RunningSandbox;
  let page: SandboxPage;
  let logFile: string;

  beforeAll(async () => {
    openai = await startFakeOpenAI();
    logFile = join(mkdtempSync(join(tmpdir(), 'countersign-sandbox-')), 'invocations.log');
    const yaml = `${recordingToolsYaml(logFile)}
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      approvers: [${BOB}, U0CAROL]
`;
    sandbox = await startSandbox({
      env: { OPENAI_API_KEY: 'sk-sandbox-test', OPENAI_BASE_URL: openai.baseURL, OPENAI_API: 'chat' },
      config: parseConfigFile(yaml, 'sandbox-test.yml'),
      port: 0,
      logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    });
    page = sandboxPage(`http://127.0.0.1:${sandbox.port}`);
  });
  afterAll(async () => {
    await sandbox?.stop();
    await openai?.close();
  });

  async function mentionAndWaitForCard(text: string) {
    openai.enqueue({ toolCalls: [RESTART] });
    const posted = await page.post('/api/messages', { user: ALICE, channel: OPS, text: `@countersign ${text}` });
    expect(posted).toMatchObject({ status: 200, body: { ok: true, ts: expect.any(String) } });
    const threadTs = posted.body.ts as string;
    const card = await page.waitFor((snapshot) => cardIn(snapshot, threadTs), 'the approval card');
    return { threadTs, card };
  }

  it('shows the card for a mention, refuses self-approval privately and runs the tool on an approver\'s click', async () => {
    const { threadTs, card } = await mentionAndWaitForCard('restart the worker');
    const state = await page.state();
    expect(state.messages.find((message) => message.ts === threadTs)).toMatchObject({ user: ALICE, text: '<@U0COUNTERSIGN> restart the worker' });
    expect(state.workspace).toMatchObject({ botUserId: 'U0COUNTERSIGN', demoModel: false, channels: [{ id: OPS, name: 'ops' }, { id: 'C0APPROVALS', name: 'approvals' }] });
    const buttons = JSON.stringify(card.blocks);
    for (const label of ['Approve', 'Deny', 'Edit']) expect(buttons).toContain(`"text":"${label}"`);

    expect((await page.click({ user: ALICE, message: card, actionId: 'countersign_approve' })).status).toBe(200);
    const refusal = await page.waitFor((snapshot) => snapshot.ephemerals.find((ephemeral) => ephemeral.user === ALICE), 'the refusal');
    expect(refusal).toMatchObject({ channel: OPS, threadTs });
    expect((await page.state()).ephemerals.filter((ephemeral) => ephemeral.user !== ALICE)).toEqual([]);
    expect(readInvocations(logFile)).toEqual([]);

    openai.enqueue({ text: 'Worker restarted.' });
    await page.click({ user: BOB, message: card, actionId: 'countersign_approve' });
    await page.waitFor((snapshot) => repliesIn(snapshot, threadTs).find((message) => message.text === 'Worker restarted.' && !message.streaming), 'the answer');
    expect(readInvocations(logFile)).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const decided = (await page.state()).messages.find((message) => message.ts === card.ts);
    expect(JSON.stringify(decided?.blocks)).toContain('Approved by <@U0BOB>');
    expect(decided?.edited).toBe(true);
  });

  it('opens Edit as a modal, shows a field error from the bot and runs the corrected input', async () => {
    const { threadTs, card } = await mentionAndWaitForCard('restart the worker, maybe edited');
    await page.click({ user: BOB, message: card, actionId: 'countersign_edit' });
    const opened = await page.waitFor((snapshot) => viewOf(snapshot, BOB), 'the Edit modal');
    const view = opened.view as { blocks: any[] };
    const serviceBlock = view.blocks.find((block) => block.type === 'input' && block.label.text === 'Service');

    const invalid = await page.post('/api/views/submit', { user: BOB, viewId: opened.viewId, values: fillForm(view, { Service: 'worker; rm -rf /' }) });
    expect(invalid.status).toBe(200);
    expect(invalid.body).toMatchObject({ ok: true, outcome: 'errors' });
    expect(Object.keys(invalid.body.errors)).toEqual([serviceBlock.block_id]);
    const withErrors = viewOf(await page.state(), BOB);
    expect(withErrors).toMatchObject({ viewId: opened.viewId, errors: invalid.body.errors });
    expect(withErrors?.values?.[serviceBlock.block_id]).toBeDefined();

    openai.enqueue({ text: 'Restarted worker-2 as edited.' });
    const valid = await page.post('/api/views/submit', { user: BOB, viewId: opened.viewId, values: fillForm(view, { Service: 'worker-2' }) });
    expect(valid.body).toEqual({ ok: true, outcome: 'closed' });
    expect(viewOf(await page.state(), BOB)).toBeUndefined();
    await page.waitFor((snapshot) => repliesIn(snapshot, threadTs).find((message) => message.text === 'Restarted worker-2 as edited.' && !message.streaming), 'the answer');
    expect(readInvocations(logFile).at(-1)).toEqual(['rollout', 'restart', 'deployment/worker-2', '-n', 'staging']);
  });

  it('denies with a reason typed in the modal', async () => {
    const { threadTs, card } = await mentionAndWaitForCard('restart the worker, but I expect a no');
    const before = readInvocations(logFile).length;
    await page.click({ user: BOB, message: card, actionId: 'countersign_deny_reason' });
    const opened = await page.waitFor((snapshot) => viewOf(snapshot, BOB), 'the Deny with reason modal');
    openai.enqueue({ text: 'Understood, not restarting.' });
    const submitted = await page.post('/api/views/submit', { user: BOB, viewId: opened.viewId, values: { reason: { value: { type: 'plain_text_input', value: 'use staging first' } } } });
    expect(submitted.body).toEqual({ ok: true, outcome: 'closed' });
    await page.waitFor((snapshot) => repliesIn(snapshot, threadTs).find((message) => message.text === 'Understood, not restarting.' && !message.streaming), 'the answer');
    const decided = (await page.state()).messages.find((message) => message.ts === card.ts);
    expect(JSON.stringify(decided?.blocks)).toContain('use staging first');
    expect(readInvocations(logFile)).toHaveLength(before);
  });

  it('answers /countersign pending privately with the waiting requests', async () => {
    await mentionAndWaitForCard('restart the worker and leave it pending');
    const response = await page.post('/api/commands', { user: 'U0DAVE', channel: OPS, command: '/countersign', text: 'pending' });
    expect(response).toEqual({ status: 200, body: { ok: true } });
    const listing = await page.waitFor((snapshot) => snapshot.ephemerals.find((ephemeral) => ephemeral.user === 'U0DAVE'), 'the pending list');
    expect(listing.text).toMatch(/approval request\(s\) waiting/);
    expect(JSON.stringify(listing.blocks)).toContain('restart_service');
    // The permalink of each card leads back to the sandbox page.
    expect(JSON.stringify(listing.blocks)).toContain(`${sandbox.url}/archives/${OPS}/p`);
  });

  it('sends a snapshot over Server-Sent Events at once and again after a change', async () => {
    const controller = new AbortController();
    const response = await fetch(`http://127.0.0.1:${sandbox.port}/api/events`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const snapshots = readSnapshots(response.body!);
    try {
      const first = await snapshots.next();
      expect(first.value?.workspace.botName).toBe('countersign');
      const posted = await page.post('/api/messages', { user: 'U0CAROL', channel: OPS, text: 'just saying hello' });
      for (;;) {
        const next = await snapshots.next();
        if (next.done) throw new Error('the event stream ended');
        if (next.value.messages.some((message) => message.ts === posted.body.ts)) break;
      }
    } finally {
      controller.abort();
    }
  });

  it('answers 400 naming the field of a bad request', async () => {
    expect(await page.post('/api/messages', { user: ALICE, channel: OPS })).toMatchObject({ status: 400, body: { ok: false, error: expect.stringMatching(/^text: /) } });
    expect(await page.post('/api/messages', { user: 'U0MALLORY', channel: OPS, text: 'hi' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^user: /) } });
    const action = { user: BOB, channel: OPS, container: { type: 'message', messageTs: '1.000001' }, blockId: 'b', actionId: 'countersign_approve', element: { type: 'button' } };
    expect(await page.post('/api/actions', action)).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^container\.messageTs: /) } });
    expect(await page.post('/api/views/submit', { user: BOB, viewId: 'V404', values: {} })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^viewId: /) } });
  });
});

describe('the sandbox with REDIS_URL set', () => {
  it('keeps its state in Redis, under keys of its own', async () => {
    const openai = await startFakeOpenAI();
    const sandbox = await startSandbox({
      env: { OPENAI_API_KEY: 'sk-sandbox-test', OPENAI_BASE_URL: openai.baseURL, OPENAI_API: 'chat', REDIS_URL: inject('redisUrl') },
      config: parseConfigFile(recordingToolsYaml(join(mkdtempSync(join(tmpdir(), 'countersign-sandbox-')), 'invocations.log')), 'sandbox-test.yml'),
      port: 0,
      logger: pino({ level: 'silent' }),
    });
    const redis = new Redis(inject('redisUrl'));
    try {
      expect(sandbox.bot.store.kind).toBe('redis');
      const page = sandboxPage(`http://127.0.0.1:${sandbox.port}`);
      openai.enqueue({ toolCalls: [RESTART] });
      const posted = await page.post('/api/messages', { user: ALICE, channel: OPS, text: '@countersign restart the worker' });
      await page.waitFor((snapshot) => cardIn(snapshot, posted.body.ts), 'the approval card');
      expect((await redis.keys(`${SANDBOX_KEY_PREFIX}*`)).length).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
      await sandbox.stop();
      await openai.close();
    }
  });
});

async function* readSnapshots(body: ReadableStream<Uint8Array>): AsyncGenerator<SandboxSnapshot> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = event.split('\n').find((line) => line.startsWith('data: '));
      if (event.includes('event: snapshot') && data) yield JSON.parse(data.slice('data: '.length)) as SandboxSnapshot;
    }
  }
}
