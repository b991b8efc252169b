import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { hangingCommand, isAlive, literalArgvTemplate, parentOf, readPids } from '../../src/tools/command/processes.test-support.js';
import { cardButtons, nextTs, startHarness, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * Command tools run through the spawner process (the default) in the real bot: a spawner that dies
 * mid-call fails that call in the thread and the next call works; stopping the bot stops the
 * spawner. Linux only: the spawner is found as the command's parent in /proc.
 */

const harness = useHarnesses();

function stuckToolYaml(pidFile: string): string {
  return `
  - name: stuck_job
    description: A job that hangs
    command: ${JSON.stringify(literalArgvTemplate(hangingCommand(pidFile)))}
    timeoutSeconds: 60
    approval: always
`;
}

const PARENT_PID_TOOL = `
  - name: parent_pid
    description: Which process started this command
    command: ${JSON.stringify(literalArgvTemplate([process.execPath, '-e', 'console.log(process.ppid)']))}
    approval: never
`;

/** Has the model call parent_pid and returns what the command printed: the pid of the process that spawned it. */
async function commandParent(h: Harness): Promise<number> {
  h.openai.enqueue({ toolCalls: [{ name: 'parent_pid', arguments: {} }] }, { text: 'Done.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'who runs commands?', ts: threadTs });
  await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Done.'), { message: 'the answer', timeoutMs: 10_000 });
  const result = toolResults(h, h.openai.requests.length - 1);
  return Number(/"stdout":"(\d+)\\n"/.exec(result)?.[1]);
}

const waitForPids = (pidFile: string) => vi.waitFor(() => readPids(pidFile) ?? Promise.reject(new Error('the command has not started')), { timeout: 10_000, interval: 20 });

function toolResults(h: Harness, requestIndex: number): string {
  return conversationOf(h.openai.requests[requestIndex]!)
    .filter((message) => message.role === 'tool')
    .map((message) => message.text ?? '')
    .join('\n');
}

describe.skipIf(process.platform !== 'linux')('command tools through the spawner process', () => {
  it('a spawner killed mid-call fails that call in the thread, kills the command, and the next call gets a new spawner', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'countersign-spawner-e2e-')), 'pids');
    // The tools section ends the default config, so these lines add a tool to it.
    const h = await harness({ extraYaml: stuckToolYaml(pidFile) });
    h.openai.enqueue({ toolCalls: [{ name: 'stuck_job', arguments: {} }] }, { text: 'The job runner failed.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'run the job', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card', timeoutMs: 10_000 });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
    const commandPids = await waitForPids(pidFile);
    const spawnerPid = parentOf(commandPids[0]!);
    expect(spawnerPid).not.toBe(process.pid);

    process.kill(spawnerPid, 'SIGKILL');

    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'The job runner failed.'), { message: 'the answer', timeoutMs: 10_000 });
    expect(toolResults(h, 1)).toContain('did not finish: the command spawner was killed by SIGKILL; the command was stopped');
    expect(await h.auditEvents()).toContainEqual(
      expect.objectContaining({ type: 'tool-executed', toolName: 'stuck_job', status: 'error', error: expect.stringContaining('the command spawner was killed by SIGKILL') }),
    );
    await vi.waitFor(() => expect(commandPids.filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 20 });

    h.openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] }, { text: 'Pods listed.' });
    const nextThreadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'list pods', ts: nextThreadTs });
    await waitFor(() => threadReplies(h, nextThreadTs).some((message) => message.text === 'Pods listed.'), { message: 'the second answer', timeoutMs: 10_000 });
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'staging']]);
  });

  it('stops the spawner when the bot stops', async () => {
    const h = await startHarness({ extraYaml: PARENT_PID_TOOL });
    const spawnerPid = await commandParent(h);
    expect(spawnerPid).not.toBe(process.pid);
    expect(isAlive(spawnerPid)).toBe(true);

    await h.stop();

    await vi.waitFor(() => expect(isAlive(spawnerPid)).toBe(false), { timeout: 10_000, interval: 20 });
  });

  it('spawns from the bot process itself with COUNTERSIGN_COMMAND_SPAWNER=off', async () => {
    const h = await harness({ extraYaml: PARENT_PID_TOOL, environment: { COUNTERSIGN_COMMAND_SPAWNER: 'off' } });
    expect(await commandParent(h)).toBe(process.pid);
  });
});
