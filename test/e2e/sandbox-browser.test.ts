import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/start-sandbox.js';

/**
 * The sandbox page in a real browser (Debian's chromium; npm packages cannot download browsers
 * here): what a newcomer does after `npm start`, through the page's own controls, against the real
 * bot with the demo model and the example policy. `.ci/run` installs chromium.
 */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => path && existsSync(path));

describe.skipIf(!CHROMIUM)('the sandbox page in a browser', () => {
  let sandbox: RunningSandbox;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ env: {}, port: 0, logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    await page.goto(`http://127.0.0.1:${sandbox.port}/`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
  });

  const thread = () => page.locator('[data-thread]');
  const button = (label: string) => thread().locator('button', { hasText: new RegExp(`^\\s*${label}\\s*$`) });
  const ask = async (text: string) => {
    const composer = page.locator('[data-composer="channel"] textarea');
    await composer.fill(text);
    await composer.press('Enter');
  };
  /** The README shows these; `COUNTERSIGN_SCREENSHOTS=docs npx vitest run test/e2e/sandbox-browser.test.ts` renews them. */
  const screenshot = async (name: string) => {
    const directory = process.env.COUNTERSIGN_SCREENSHOTS;
    if (directory) await page.screenshot({ path: join(directory, name) });
  };
  const actAs = (userId: string) => page.locator(`[data-act-as="${userId}"]`).click();

  it('asks as alice, refuses her own approval and dave’s, then runs once bob approves', async () => {
    await expect.poll(() => page.locator('[data-banner]').textContent()).toContain('Demo model');
    await ask('@countersign restart the worker in staging');
    const approve = button('Approve');
    await approve.waitFor({ timeout: 15_000 });
    await expect.poll(() => thread().textContent()).toContain('restart_service');
    await screenshot('sandbox-card.png');

    // A refused self-approval, shown to the requester only.
    await approve.click();
    await expect.poll(() => thread().textContent(), { timeout: 10_000 }).toContain('You asked for this, so someone else must approve it');
    await actAs('U0DAVE');
    await expect.poll(() => page.getByText('You asked for this').count()).toBe(0);
    await approve.click();
    await expect.poll(() => page.getByText('Only visible to you').count(), { timeout: 10_000 }).toBeGreaterThan(0);

    await actAs('U0BOB');
    await approve.click();
    await expect.poll(() => thread().textContent(), { timeout: 15_000 }).toMatch(/Approved by\s*@bob/);
    expect(await thread().textContent()).toContain('Approvers: @oncall');
    await expect.poll(() => thread().textContent(), { timeout: 15_000 }).toContain('rollout restart deployment/worker -n staging');
    expect(pageErrors).toEqual([]);
  });

  it('edits through the bot’s form: an invalid value is refused on its field, the fixed one runs', async () => {
    await actAs('U0ALICE');
    await page.locator('[data-close-thread]').first().click();
    await ask('@countersign restart the api in staging');
    await button('Edit').waitFor({ timeout: 15_000 });
    await actAs('U0BOB');
    await button('Edit').click();
    const modal = page.locator('[data-modal-host] [data-view-id]');
    await modal.waitFor({ timeout: 10_000 });
    const service = modal.getByLabel('Service');
    await service.fill('API Server!');
    await screenshot('sandbox-edit.png');
    await modal.locator('[data-modal-submit]').click();
    const fieldError = modal.locator('[data-error-for]:not([hidden])');
    await expect.poll(() => fieldError.textContent(), { timeout: 10_000 }).toMatch(/\S/);
    expect(await service.inputValue()).toBe('API Server!');

    await service.fill('web');
    await modal.locator('[data-modal-submit]').click();
    await modal.waitFor({ state: 'detached', timeout: 10_000 });
    await expect.poll(() => thread().textContent(), { timeout: 15_000 }).toContain('rollout restart deployment/web -n staging');
    expect(await thread().textContent()).toContain('so version 2 ran');
    expect(pageErrors).toEqual([]);
  });
});
