import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { autoApprovedCall } from '../../agent/auto-approved-call.test-support.js';
import { parseConfigFile } from '../../config/config-file.js';
import { createCommandTool } from './command-tool.js';
import { spawnCommand } from './run-command.js';

const dir = mkdtempSync(join(tmpdir(), 'countersign-outright-'));
const marker = join(dir, 'ran');
const [toolConfig] = parseConfigFile(
  `
tools:
  - name: restart
    description: Restart
    command: ["sh", "-c", "echo ran > ${marker}; sleep 5", "sh", "{service}"]
    parameters:
      service: { type: string, description: Which service }
    approval: never
`,
  'countersign.yml',
).tools;

// Where a command cannot be held (Windows; no PATH and a C library whose default search path is not
// known) it is spawned outright and runs before the watchdog holds it; if the watchdog then cannot,
// the command is stopped, though it ran (README, "Command tools and `spawn`").
describe.skipIf(process.platform === 'win32')('a command spawned outright that the watchdog then cannot hold', () => {
  it('ran, so it is not answered or recorded as "did not run" (Try again would run it again)', async () => {
    const call = autoApprovedCall({
      definitions: [
        createCommandTool(toolConfig!, {
          runCommand: (options) =>
            spawnCommand({
              ...options,
              environment: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
              spawnHeld: (command, args, spawnOptions) => ({ child: spawn(command, args, { ...spawnOptions, shell: false }), release: () => {}, held: false }),
              // The watchdog fails only once the command has run (its fork failed, or it did not answer in time).
              hold: async () => {
                await vi.waitFor(() => expect(existsSync(marker)).toBe(true), { timeout: 10_000, interval: 10 });
                return false;
              },
            }),
        }),
      ],
      toolName: 'restart',
      input: { service: 'web' },
    });
    const outcome = await call.execute().then(
      (value) => ({ value }),
      (error: unknown) => ({ error: String(error) }),
    );
    expect(existsSync(marker)).toBe(true);
    expect(outcome).not.toMatchObject({ error: expect.stringContaining('did not run') });
    expect(call.executions).toEqual([expect.not.objectContaining({ started: false })]);
  }, 20_000);
});
