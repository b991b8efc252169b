import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDirectCommandRunner } from './direct-command-runner.js';
import { isAlive } from './processes.test-support.js';
import { createSpawnerCommandRunner } from './spawner-client.js';

/**
 * A command that leaves a process of its own group running and exits: a script ending in
 * `some-helper &`, a CLI that forks a background refresher. README ("Command tools and spawn"):
 * "no command outlives the bot"; the timeout sends "SIGTERM then SIGKILL to the command's process group".
 */
const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
});

const BACKGROUND = `const child = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: 'ignore' }); child.unref(); console.log(child.pid);`;

describe.each([
  { runner: 'direct', create: () => createDirectCommandRunner() },
  { runner: 'spawner', create: () => createSpawnerCommandRunner() },
])('a command that leaves a background process in its group ($runner)', ({ create }) => {
  it('does not leave that process running past the command timeout and the bot stopping', { timeout: 30_000 }, async () => {
    const runner = create();
    const result = await runner.run({ argv: [process.execPath, '-e', BACKGROUND], timeoutMs: 1000, outputLimit: 4000 });
    const backgroundPid = Number(result.stdout.trim());
    leftovers.push(backgroundPid);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(isAlive(backgroundPid)).toBe(true);

    // The bot stops: its commands must not outlive it.
    await runner.close();
    // Well past the 1 s timeout and the runners' kill graces.
    await vi.waitFor(() => expect(isAlive(backgroundPid), `process ${backgroundPid} of the command's group still runs`).toBe(false), { timeout: 8000, interval: 100 });
  });
});
