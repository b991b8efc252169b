import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createLease } from '../../conversation/lease.js';
import { FencedError } from '../../store/fenced-error.js';
import { createCommandSlots, defaultMinAvailableMemory, withCommandSlots } from './command-slots.js';
import { createCommandTool } from './command-tool.js';
import { ABORTED_BEFORE_START, runCommand, type CommandResult, type RunCommandOptions } from './run-command.js';

const waitFor = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('command slots', () => {
  it('starts at most maxRunning at once, the rest in the order they came', async () => {
    const slots = createCommandSlots({ maxRunning: 2, availableMemory: () => Number.MAX_SAFE_INTEGER });
    const order: string[] = [];
    const first = await slots.acquire();
    const second = await slots.acquire();
    const admitted = (name: string) => (release: () => void) => {
      order.push(name);
      return release;
    };
    const third = slots.acquire().then(admitted('third'));
    const fourth = slots.acquire().then(admitted('fourth'));
    expect([slots.active(), slots.waiting()]).toEqual([2, 2]);
    second();
    second(); // Twice is once: a slot is freed one time, so the fourth still waits.
    const releaseThird = await third;
    expect(order).toEqual(['third']);
    expect([slots.active(), slots.waiting()]).toEqual([2, 1]);
    first();
    const releaseFourth = await fourth;
    expect(order).toEqual(['third', 'fourth']);
    releaseThird();
    releaseFourth();
    expect([slots.active(), slots.waiting()]).toEqual([0, 0]);
  });

  it('starts no second command while memory is short, and always lets one run', async () => {
    let available = 100;
    const slots = createCommandSlots({ maxRunning: 10, minAvailableMemoryBytes: 1_000, availableMemory: () => available });
    const only = await slots.acquire();
    let started = false;
    const next = slots.acquire().then((release) => {
      started = true;
      return release;
    });
    expect(slots.waiting()).toBe(1);
    only();
    // The only one ended: the next may run although memory is still short.
    (await next)();
    expect(started).toBe(true);
    available = 5_000;
    const releases = await Promise.all([slots.acquire(), slots.acquire(), slots.acquire()]);
    expect(slots.active()).toBe(3);
    for (const release of releases) release();
  });
});

describe('command tools behind the slots', () => {
  let directory: string;
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('starts a second real command only after the first has ended, and reports one aborted while waiting as not run', async () => {
    directory = mkdtempSync(join(tmpdir(), 'countersign-slots-'));
    const log = join(directory, 'log');
    const release = join(directory, 'release');
    writeFileSync(log, '');
    // Each command writes when it starts; the first then waits for the test's go-ahead.
    const script = (name: string, wait: boolean) =>
      `const fs = require('node:fs'); fs.appendFileSync(${JSON.stringify(log)}, '${name} started\\n');` +
      (wait ? `const t = setInterval(() => { if (fs.existsSync(${JSON.stringify(release)})) { fs.appendFileSync(${JSON.stringify(log)}, '${name} ended\\n'); clearInterval(t); } }, 5);` : '');
    const slots = createCommandSlots({ maxRunning: 1, availableMemory: () => Number.MAX_SAFE_INTEGER });
    const run = withCommandSlots(runCommand, slots);
    const options = (name: string, wait: boolean) => ({ argv: [process.execPath, '-e', script(name, wait)], timeoutMs: 30_000, outputLimit: 1_000 });
    const first = run(options('first', true));
    const second = run(options('second', false));
    const controller = new AbortController();
    const third: Promise<CommandResult> = run({ ...options('third', false), abortSignal: controller.signal });
    await waitFor(() => readFileSync(log, 'utf8').includes('first started') && slots.waiting() === 2);
    controller.abort();
    expect(await third).toMatchObject({ exitCode: null, error: ABORTED_BEFORE_START });
    appendFileSync(release, 'go');
    expect((await first).exitCode).toBe(0);
    expect((await second).exitCode).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('first started\nfirst ended\nsecond started\n');
  });
});

describe('a command that waited for a slot', () => {
  it('does not start once its process lost the thread while it waited (a stall the heartbeat had not seen yet)', async () => {
    const clock = { now: 1_000, heldUntil: 2_000, current: true };
    const lease = createLease({ store: { fenceState: async () => (clock.current ? 'current' : 'taken') }, fence: { threadKey: 'T1:C1:1.1', token: '7' }, heldUntil: () => clock.heldUntil, now: () => clock.now });
    const started: string[][] = [];
    let finishFirst = () => {};
    const firstRunning = new Promise<void>((resolve) => {
      finishFirst = resolve;
    });
    const runner = async (options: RunCommandOptions): Promise<CommandResult> => {
      started.push(options.argv);
      if (started.length === 1) await firstRunning;
      return { exitCode: 0, signal: null, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 0, timedOut: false };
    };
    const slots = createCommandSlots({ maxRunning: 1, availableMemory: () => Number.MAX_SAFE_INTEGER });
    const [toolConfig] = parseConfigFile('tools: [{ name: deploy, description: d, command: [deploy, "{service}"], parameters: { service: { type: string } } }]', 'countersign.yml').tools;
    const tool = createCommandTool(toolConfig!, { runCommand: withCommandSlots(runner, slots) });
    const context = { requesterId: 'U1', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'c', idempotencyKey: 'k', assertHeld: () => lease.assertHeld() };

    const first = tool.execute({ service: 'api' }, context);
    const second = tool.execute({ service: 'web' }, context);
    await waitFor(() => started.length === 1 && slots.waiting() === 1);
    // The process stalls past its lock while the second call waits; another process takes the thread.
    clock.now = 3_000;
    clock.current = false;
    finishFirst();

    await expect(second).rejects.toBeInstanceOf(FencedError);
    expect((await first).exitCode).toBe(0);
    expect(started).toEqual([['deploy', 'api']]);
    expect(lease.lost()).toBe(true);
    expect(slots.active()).toBe(0);
  });
});

describe('the default memory floor', () => {
  it('is a tenth of the container limit, or of the machine without one, and at least 64 MiB', () => {
    const mib = 1024 * 1024;
    const machine = 16 * 1024 * mib;
    expect(defaultMinAvailableMemory({ machine, constrained: 2 * 1024 * mib })).toBe(Math.round((2 * 1024 * mib) / 10));
    expect(defaultMinAvailableMemory({ machine, constrained: 512 * mib })).toBe(64 * mib);
    // No limit: Node says 0, or the cgroup's "max" (far beyond the machine).
    expect(defaultMinAvailableMemory({ machine, constrained: 0 })).toBe(Math.round(machine / 10));
    expect(defaultMinAvailableMemory({ machine, constrained: 2 ** 64 })).toBe(Math.round(machine / 10));
  });
});
