import { Window } from 'happy-dom';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxSnapshot } from '../../src/sandbox/sandbox-api.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/start-sandbox.js';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { repliesIn, sandboxPage } from './sandbox-page.js';

/**
 * Model output is hostile. The bot's safeMarkdown leaves code verbatim (Slack shows code as the
 * text it is) and rewrites a link whose label names another address everywhere else. Slack reads
 * `markdown_text` as CommonMark, where an indented block, a `~~~` fence and a double-backtick span
 * are code: `<https://evil.example|https://docs.example/runbook>` inside them is shown as those
 * characters. The sandbox page must not turn that code into a live link disguised as the runbook.
 */
const DISGUISED = '<https://evil.example/steal|https://docs.example/runbook>';
const ANSWER = [
  'The runbook, as an indented block:',
  '',
  `    ${DISGUISED}`,
  '',
  'and as a tilde fence:',
  '',
  '~~~',
  DISGUISED,
  '~~~',
  '',
  `and in a double-backtick span: \`\`x\`${DISGUISED}\`y\`\`. Done.`,
].join('\n');

describe('code in a natively streamed answer, drawn by the sandbox page', () => {
  let sandbox: RunningSandbox;
  const window = new Window({ url: 'http://localhost:3000/', settings: { disableJavaScriptEvaluation: true, disableJavaScriptFileLoading: true, disableCSSFileLoading: true } });
  beforeAll(async () => {
    // Written slowly, as a real model writes, so the bot streams it natively (markdown_text).
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          async start(controller) {
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.enqueue({ type: 'text-start', id: 't' });
            for (const delta of ANSWER.split(/(?<=\n\n)/)) {
              controller.enqueue({ type: 'text-delta', id: 't', delta });
              await new Promise((resolve) => setTimeout(resolve, 600));
            }
            controller.enqueue({ type: 'text-end', id: 't' });
            controller.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } } as LanguageModelV4StreamPart);
            controller.close();
          },
        }),
      }),
    });
    sandbox = await startSandbox({ env: {}, model, port: 0, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await sandbox?.stop();
    await window.happyDOM.close();
  });

  it('shows it as code, as Slack does: no link to evil.example labelled as the runbook', async () => {
    const page = sandboxPage(`http://127.0.0.1:${sandbox.port}`);
    const posted = await page.post('/api/messages', { user: 'U0ALICE', channel: 'C0OPS', text: '@countersign where is the runbook?' });
    const threadTs = posted.body.ts as string;
    const answer = await page.waitFor((snapshot) => repliesIn(snapshot, threadTs).find((message) => message.text.includes('Done.') && !message.streaming), 'the answer');
    // The bot left the code verbatim, as Slack shows code.
    expect(answer.format).toBe('markdown');
    expect(answer.text).toContain(`    ${DISGUISED}`);
    const snapshot: SandboxSnapshot = await page.state();
    const blockKit = (await import(new URL('../../src/sandbox/web/public/block-kit.js', import.meta.url).href)) as any;
    const messages = (await import(new URL('../../src/sandbox/web/public/messages.js', import.meta.url).href)) as any;
    const ctx = blockKit.renderContext(snapshot, { actingUserId: 'U0ALICE', timeZone: 'UTC' });
    const node = window.document.createElement('div');
    node.innerHTML = messages.renderItems([{ kind: 'message', at: 0, message: answer }], ctx, { inThread: true, snapshot, status: () => undefined });
    const links = Array.from(node.querySelectorAll('a')).map((link) => ({ href: link.getAttribute('href'), label: link.textContent }));
    // Before a fix: three links to https://evil.example/steal, each labelled https://docs.example/runbook.
    expect(links).toEqual([]);
    expect(node.querySelector('.msg-body')!.textContent).toContain(DISGUISED);
  });
});
