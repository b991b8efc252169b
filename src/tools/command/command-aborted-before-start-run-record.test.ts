import { describe, expect, it } from 'vitest';
import { autoApprovedCall } from '../../agent/auto-approved-call.test-support.js';
import { parseConfigFile } from '../../config/config-file.js';
import { createCommandSlots, withCommandSlots } from './command-slots.js';
import { createCommandTool } from './command-tool.js';
import type { RunCommand } from './run-command.js';

/**
 * A command call that waited for a command slot and whose turn was aborted meanwhile (the turn
 * failed on another call, the lease was lost, Redis lost the state) is not spawned:
 * `withCommandSlots` answers it with `commandNotRun` (`neverRan`), which the command tool turns into
 * a ToolNotStartedError, as it does a closed runner's refusal. The turn has written the call's start
 * marker by then: the call is recorded as not run (`started: false`), and is not announced as one
 * that "ran without a card".
 */
describe('an auto-approved command call aborted while it waited for a command slot', () => {
  it('is recorded as not run and not told as "ran without a card"', async () => {
    const [toolConfig] = parseConfigFile(
      `
tools:
  - name: restart
    description: Restart
    command: ["/bin/true", "{service}"]
    parameters:
      service: { type: string, description: Which service }
    approval: never
`,
      'countersign.yml',
    ).tools;
    const spawned: string[][] = [];
    const run: RunCommand = async (options) => {
      spawned.push(options.argv);
      return { exitCode: 0, signal: null, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 1, timedOut: false } as never;
    };
    const slots = createCommandSlots({ maxRunning: 1, availableMemory: () => Number.MAX_SAFE_INTEGER });
    // Another command holds the only slot.
    const release = await slots.acquire(undefined);
    const turn = new AbortController();
    const runCommand: RunCommand = (options) => withCommandSlots(run, slots)({ ...options, abortSignal: turn.signal });
    const call = autoApprovedCall({ definitions: [createCommandTool(toolConfig!, { runCommand })], toolName: 'restart', input: { service: 'web' } });

    const result = call.execute().catch((error: unknown) => error);
    // Barrier: the call has written its marker and is waiting for the slot.
    await expect.poll(() => call.markers).toEqual(['c1']);
    turn.abort(new Error('the turn failed'));
    await result;
    release();

    expect(spawned).toEqual([]);
    expect(call.toldRan).toEqual([]);
    expect(call.executions).toEqual([expect.objectContaining({ toolCallId: 'c1', started: false })]);
  });
});
