import { describe, expect, it } from 'vitest';
import { autoApprovedCall } from '../../agent/auto-approved-call.test-support.js';
import { parseConfigFile } from '../../config/config-file.js';
import type { CommandRunner } from './command-runner.js';
import { createCommandTool } from './command-tool.js';
import { createDirectCommandRunner } from './direct-command-runner.js';
import { createSpawnerCommandRunner } from './spawner-client.js';

/**
 * A command runner that is closed (the bot is stopping) refuses a call before it spawns anything.
 * The turn has written the call's start marker by then: the call must be recorded as not run, and a
 * call let through without a card must not be announced as one that "ran without a card".
 */
describe.each<{ runner: string; create: () => CommandRunner }>([
  { runner: 'direct', create: () => createDirectCommandRunner() },
  { runner: 'spawner', create: () => createSpawnerCommandRunner() },
])('an auto-approved command call refused by a closed $runner runner', ({ create }) => {
  it('is recorded as not run and not told as "ran without a card"', async () => {
    const runner = create();
    await runner.close();
    const [toolConfig] = parseConfigFile(
      `
tools:
  - name: restart
    description: Restart
    command: ["${process.execPath.replaceAll('\\', '\\\\')}", "-e", "", "{service}"]
    parameters:
      service: { type: string, description: Which service }
    approval: never
`,
      'countersign.yml',
    ).tools;
    const call = autoApprovedCall({ definitions: [createCommandTool(toolConfig!, { runCommand: runner.run })], toolName: 'restart', input: { service: 'web' } });

    await expect(call.execute()).rejects.toThrow(/the command runner is closed/);
    // The marker was written before the runner refused: its record must say the call did not start.
    expect(call.markers).toEqual(['c1']);
    expect(call.toldRan).toEqual([]);
    expect(call.executions).toEqual([expect.objectContaining({ toolCallId: 'c1', started: false, output: expect.stringMatching(/restart did not run/) })]);
    expect(call.failures).toEqual([expect.objectContaining({ type: 'tool_not_started' })]);
  });
});
