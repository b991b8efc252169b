import { existsSync } from 'node:fs';
import { pino } from 'pino';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeStep } from '../../src/approvals/pending-step.test-support.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/start-sandbox.js';
import type { JsonSchema } from '../../src/slack/modals/json-schema.js';
import { buildSchemaForm, parseSchemaForm } from '../../src/slack/modals/schema-form.js';
import { editCallView } from '../../src/slack/views/edit-call-view.js';

/**
 * The Edit form in a real browser. The page writes each control as HTML, and the HTML parser drops
 * a newline right after `<textarea>`: a multiline value the model proposed starting with a newline
 * (a script body, a heredoc) comes back without it when the approver submits the form untouched,
 * or edits only another field. Slack's client keeps the initial_value it was given.
 */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => path && existsSync(path));

const SCHEMA: JsonSchema = { type: 'object', properties: { script: { type: 'string' }, replicas: { type: 'integer' } }, required: ['script'] };
const PROPOSED = { script: '\nset -e\nkubectl rollout restart deployment/worker\n', replicas: 2 };

describe.skipIf(!CHROMIUM)('the Edit form of the sandbox page in a browser', () => {
  let sandbox: RunningSandbox;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    sandbox = await startSandbox({ env: {}, port: 0, logger: pino({ level: 'silent' }) });
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${sandbox.port}/`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
  });

  it('gives back an untouched multiline value exactly as proposed', async () => {
    const form = buildSchemaForm({ schema: SCHEMA, initialValue: PROPOSED });
    const step = makeStep([{ approvalId: 'ap1', input: PROPOSED }]);
    const view = editCallView({ step, call: step.calls[0]!, form, privateMetadata: '{}' });
    // The page's own modules, rendering and reading the form as the page does when Submit is clicked.
    // A string, so vitest does not rewrite the page's dynamic import.
    const values = await page.evaluate(`(async (view) => {
      const blockKit = await import('/static/block-kit.js');
      const host = document.createElement('div');
      document.body.appendChild(host);
      host.innerHTML = blockKit.renderModal(view, { viewId: 'V1' }, {});
      blockKit.settleSelections(host);
      return blockKit.collectStateValues(host, view.blocks);
    })(${JSON.stringify(view)})`);
    const parsed = parseSchemaForm({ form, stateValues: values as never });
    // Before a fix: { script: 'set -e\nkubectl rollout restart deployment/worker\n', replicas: 2 }.
    expect(parsed).toMatchObject({ ok: true, value: PROPOSED });
  });
});
