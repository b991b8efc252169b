import { existsSync } from 'node:fs';
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
  const actAs = (userId: string) => page.locator(`[data-act-as="${userId}"]`).click();

  it('asks as alice, refuses dave, runs once bob approves, and shows an edit form with the bot’s fields', async () => {
    await expect.poll(() => page.locator('[data-banner]').textContent()).toContain('Demo model');

    const composer = page.locator('[data-composer="channel"] textarea');
    await composer.fill('@countersign restart the worker in staging');
    await composer.press('Enter');
    // The thread opens by itself and the card arrives in it.
    const approve = button('Approve');
    await approve.waitFor({ timeout: 15_000 });
    await expect.poll(() => thread().textContent()).toContain('restart_service');

    await actAs('U0DAVE');
    await approve.click();
    await expect.poll(() => page.getByText('Only visible to you').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await actAs('U0ALICE');
    // Ephemerals are the clicker's only.
    await expect.poll(() => page.getByText('Only visible to you').count()).toBe(0);

    await actAs('U0BOB');
    await button('Edit').click();
    const modal = page.locator('[data-modal-host] [data-view-id]');
    await modal.waitFor({ timeout: 10_000 });
    expect(await modal.textContent()).toContain('Edit and approve');
    await page.locator('[data-modal-close]').first().click();
    await modal.waitFor({ state: 'detached' });

    await approve.click();
    await expect.poll(() => thread().textContent(), { timeout: 15_000 }).toMatch(/Approved by\s*@bob/);
    expect(await thread().textContent()).toContain('Approvers: @oncall');
    await expect.poll(() => thread().textContent(), { timeout: 15_000 }).toContain('rollout restart deployment/worker -n staging');
    expect(pageErrors).toEqual([]);
  });
});
