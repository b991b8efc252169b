import { describe, expect, it } from 'vitest';
import { autoApprovedCall } from '../../agent/auto-approved-call.test-support.js';
import { parseConfigFile } from '../../config/config-file.js';
import { createCommandTool } from './command-tool.js';
import { createDirectCommandRunner } from './direct-command-runner.js';
import { spawnCommand, type RunCommand } from './run-command.js';
import { createSpawnerCommandRunner } from './spawner-client.js';

/**
 * A command whose code certainly never ran (aborted before its start, stopped while held before the
 * watchdog let it go, no watchdog to hold it) comes back as a result flagged `neverRan`: the command
 * tool refuses the call as not started, so the turn records it as not run and tells nobody it "ran
 * without a card". A command that was let go and then stopped may have done anything: it ran.
 */
const [toolConfig] = parseConfigFile(
  `
tools:
  - name: restart
    description: Restart
    command: ["/bin/sh", "-c", "sleep 5", "sh", "{service}"]
    parameters:
      service: { type: string, description: Which service }
    approval: never
`,
  'countersign.yml',
).tools;
const environment = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const callWith = (runCommand: RunCommand) => autoApprovedCall({ definitions: [createCommandTool(toolConfig!, { runCommand })], toolName: 'restart', input: { service: 'web' } });

function expectNotRun(call: ReturnType<typeof callWith>, reason: RegExp) {
  expect(call.markers).toEqual(['c1']);
  expect(call.toldRan).toEqual([]);
  expect(call.executions).toEqual([expect.objectContaining({ toolCallId: 'c1', started: false, output: expect.stringMatching(reason) })]);
  expect(call.failures).toEqual([expect.objectContaining({ type: 'tool_not_started' })]);
}

describe.skipIf(process.platform !== 'linux')('a command tool call whose command never ran', () => {
  it.each([
    { runner: 'direct', create: () => createDirectCommandRunner() },
    { runner: 'spawner', create: () => createSpawnerCommandRunner() },
  ])('aborted before the $runner runner started it', async ({ create }) => {
    const runner = create();
    try {
      const call = callWith((options) => runner.run({ ...options, abortSignal: AbortSignal.abort() }));
      await expect(call.execute()).rejects.toThrow('aborted before start; restart did not run.');
      expectNotRun(call, /^aborted before start; restart did not run\./);
    } finally {
      await runner.close();
    }
  });

  it('timed out while held, before the watchdog let it go', async () => {
    const call = callWith((options) => spawnCommand({ ...options, timeoutMs: 200, environment, hold: () => new Promise<boolean>(() => {}) }));
    await expect(call.execute()).rejects.toThrow(/before it could start.*restart did not run\./);
    expectNotRun(call, /before it could start/);
  });

  it('not let go: no watchdog holds its group', async () => {
    const call = callWith((options) => spawnCommand({ ...options, environment, hold: () => Promise.resolve(false) }));
    await expect(call.execute()).rejects.toThrow(/the process-group watchdog is not running.*restart did not run\./);
    expectNotRun(call, /watchdog is not running/);
  });

  it('but one let go and then timed out ran, and is recorded so', async () => {
    const call = callWith((options) => spawnCommand({ ...options, timeoutMs: 200, environment, hold: () => Promise.resolve(true) }));
    expect(await call.execute()).toMatchObject({ timedOut: true, error: 'timed out after 200 ms' });
    expect(call.toldRan).toEqual([expect.objectContaining({ toolCallId: 'c1' })]);
    expect(call.executions).toEqual([expect.not.objectContaining({ started: false })]);
  });
});
