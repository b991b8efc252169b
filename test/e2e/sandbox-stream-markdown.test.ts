import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { Window } from 'happy-dom';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxSnapshot } from '../../src/sandbox/sandbox-api.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/start-sandbox.js';
import { repliesIn, sandboxPage } from './sandbox-page.js';

/**
 * The sandbox streams answers natively by default (SLACK_STREAMING=native): chat.startStream /
 * appendStream / stopStream with `markdown_text`, which Slack renders as Markdown (the bot writes it
 * with safeMarkdown: `\<` and `\&` escapes, `*italic*`, `[label](url)`). The emulator marks such a
 * message `format: 'markdown'`, the snapshot carries it, and the page draws it as Markdown, not mrkdwn.
 */
const ANSWER = ['The *worker* is fine.\n', 'If a < b & c, see [the logs](https://logs.example/x).\n', 'Done.\n'];

function slowModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 't' });
          for (const delta of ANSWER) {
            controller.enqueue({ type: 'text-delta', id: 't', delta });
            await new Promise((resolve) => setTimeout(resolve, 1500));
          }
          controller.enqueue({ type: 'text-end', id: 't' });
          controller.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } } as LanguageModelV4StreamPart);
          controller.close();
        },
      }),
    }),
  });
}

describe('a natively streamed answer on the sandbox page', () => {
  let sandbox: RunningSandbox;
  const window = new Window({ url: 'http://localhost:3000/', settings: { disableJavaScriptEvaluation: true, disableJavaScriptFileLoading: true, disableCSSFileLoading: true } });
  beforeAll(async () => {
    sandbox = await startSandbox({ env: {}, model: slowModel(), port: 0, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await sandbox?.stop();
    await window.happyDOM.close();
  });

  it('is drawn as the Markdown Slack renders', async () => {
    const calls: string[] = [];
    sandbox.emulator.onCall((call) => calls.push(call.method));
    const page = sandboxPage(`http://127.0.0.1:${sandbox.port}`);
    const posted = await page.post('/api/messages', { user: 'U0ALICE', channel: 'C0OPS', text: '@countersign how is the worker?' });
    const threadTs = posted.body.ts as string;
    const answer = await page.waitFor((snapshot) => repliesIn(snapshot, threadTs).find((message) => message.text.includes('Done.') && !message.streaming), 'the answer');
    expect(calls).toContain('chat.startStream');
    const snapshot: SandboxSnapshot = await page.state();
    const blockKit = (await import(new URL('../../src/sandbox/web/public/block-kit.js', import.meta.url).href)) as any;
    const messages = (await import(new URL('../../src/sandbox/web/public/messages.js', import.meta.url).href)) as any;
    const ctx = blockKit.renderContext(snapshot, { actingUserId: 'U0ALICE', timeZone: 'UTC' });
    const node = window.document.createElement('div');
    node.innerHTML = messages.renderItems([{ kind: 'message', at: 0, message: answer }], ctx, { inThread: true, snapshot, status: () => undefined });
    const shown = node.querySelector('.msg-body')!.textContent;
    // Drawn as mrkdwn it read "The worker is fine.If a \\< b & c, see [the logs](https://logs.example/x).Done." with
    // "worker" in <strong> (Slack: italic), the link as literal text and safeMarkdown's backslash shown.
    expect({ text: answer.text, shown }).toMatchObject({ shown: expect.stringContaining('If a < b & c, see the logs.') });
    expect(node.querySelector('.msg-body em')?.textContent).toBe('worker');
    expect(node.querySelector('.msg-body a')?.getAttribute('href')).toBe('https://logs.example/x');
  });
});
