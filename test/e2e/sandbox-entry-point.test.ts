import { describe, expect, it } from 'vitest';
import type { SandboxSnapshot } from '../../src/sandbox/sandbox-api.js';
import { freePort, startChildBot, stopChildBot } from './child-bot.js';
import { waitFor } from './harness.js';

/**
 * What a newcomer does first: `npm start` with no Slack variables and no OpenAI key. The entry point
 * (built by npm's prestart, in a copy of the repository) starts the sandbox, says where it is, and
 * serves the page, the demo model and the example config included.
 */
describe('npm start without Slack credentials', () => {
  it('starts the sandbox, prints its address, serves the page and stops on SIGTERM', async () => {
    const port = await freePort();
    const sandbox = startChildBot({ PORT: String(port) });
    try {
      const address = `countersign sandbox: http://localhost:${port}`;
      await waitFor(() => sandbox.output().includes(address) || sandbox.child.exitCode !== null, { timeoutMs: 90_000, message: 'the sandbox address' });
      expect(sandbox.output()).toContain(address);

      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect((await page.text()).toLowerCase()).toContain('<!doctype html>');
      const state = (await (await fetch(`http://127.0.0.1:${port}/api/state`)).json()) as SandboxSnapshot;
      expect(state.workspace).toMatchObject({ demoModel: true, botName: 'countersign' });
      expect(state.workspace.users.map((user) => user.name)).toEqual(['alice', 'bob', 'carol', 'dave']);
    } finally {
      await stopChildBot(sandbox);
    }
    expect(sandbox.output()).not.toContain('could not stop cleanly');
  }, 120_000);
});
