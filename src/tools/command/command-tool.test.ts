import { afterAll, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import type { ToolContext } from '../tool-definition.js';
import { createCommandTool } from './command-tool.js';
import { runCommand as runDirectly, type RunCommand, type RunCommandOptions } from './run-command.js';
import { createSpawnerCommandRunner } from './spawner-client.js';

const context: ToolContext = {
  requesterId: 'U1',
  teamId: 'T1',
  channel: 'C1',
  threadTs: '1712345678.000100',
  toolCallId: 'call-1',
  idempotencyKey: 'key-1',
};

const spawner = createSpawnerCommandRunner();
afterAll(() => spawner.close());

// One behaviour, two runners: spawning from this process, and asking the spawner process to.
describe.each<{ runner: string; runCommand: RunCommand }>([
  { runner: 'direct', runCommand: runDirectly },
  { runner: 'spawner', runCommand: spawner.run },
])('createCommandTool ($runner)', ({ runCommand }) => {
  function toolFrom(yamlText: string) {
    const [toolConfig] = parseConfigFile(yamlText, 'countersign.yml').tools;
    if (toolConfig === undefined) throw new Error('no tool in config');
    return createCommandTool(toolConfig, { runCommand });
  }

  const echoTool = (extra = '') =>
    toolFrom(`
tools:
  - name: echo_args
    description: Print the arguments
    command: ["${process.execPath.replaceAll('\\', '\\\\')}", "-e", "console.log(JSON.stringify(process.argv.slice(1)))", "--", "{message}", "count={count}", "{flag}"]
    parameters:
      message: { type: string, description: What to print }
      count: { type: number, integer: true, default: 1 }
      flag: { type: string, optional: true, allowLeadingDash: true }
${extra}`);

  it('exposes the configured name, description, approval rule and input schema', () => {
    const tool = echoTool('    approval: never');
    expect(tool).toMatchObject({ name: 'echo_args', description: 'Print the arguments', approval: 'never' });
    expect(tool.inputSchema.safeParse({ message: 'hi' }).success).toBe(true);
    expect(tool.inputSchema.safeParse({ message: '--all' }).success).toBe(false);
  });

  it('needs approval unless the config says otherwise', () => {
    expect(echoTool().approval).toBe('always');
  });

  it('runs the rendered command and reports it to the model; `x; rm -rf /` stays one argument', async () => {
    const output = await echoTool().execute({ message: 'x; rm -rf /', count: 2 }, context);

    expect(JSON.parse(output.stdout)).toEqual(['x; rm -rf /', 'count=2']);
    expect(output).toMatchObject({ exitCode: 0, signal: null, timedOut: false, stderr: '', truncated: false });
    expect(output.command.slice(3)).toEqual(['--', 'x; rm -rf /', 'count=2']);
    expect(output).not.toHaveProperty('error');
  });

  it("runs with the turn's lease check in its context, which does not travel to the runner", async () => {
    let checked = 0;
    const output = await echoTool().execute({ message: 'hi' }, { ...context, assertHeld: async () => void (checked += 1) });
    expect(JSON.parse(output.stdout)).toEqual(['hi', 'count=1']);
    // Only the slots in front of a runner wait, so only they check again.
    expect(checked).toBe(0);
  });

  it('does not expand $(id) or backticks', async () => {
    const output = await echoTool().execute({ message: '$(id) `id`', flag: '--verbose' }, context);
    expect(JSON.parse(output.stdout)).toEqual(['$(id) `id`', 'count=1', '--verbose']);
  });

  it('re-validates input, so an edited value cannot bypass the rules', async () => {
    await expect(echoTool().execute({ message: '--all' }, context)).rejects.toThrow('must not start with "-"');
  });

  it('passes the timeout, output limit, working directory and abort signal to the runner', async () => {
    const calls: RunCommandOptions[] = [];
    const [toolConfig] = parseConfigFile(
      `
tools:
  - name: uptime
    description: Load average
    command: [uptime]
    timeoutSeconds: 5
    outputLimit: 100
    workingDirectory: /srv
`,
      'countersign.yml',
    ).tools;
    const tool = createCommandTool(toolConfig!, {
      runCommand: async (options) => {
        calls.push(options);
        return { exitCode: null, signal: 'SIGTERM', stdout: 'partial', stderr: '', stdoutTruncated: true, stderrTruncated: false, durationMs: 5000, timedOut: true, error: 'timed out after 5000 ms' };
      },
    });
    const abortController = new AbortController();

    const output = await tool.execute({}, { ...context, abortSignal: abortController.signal });

    expect(calls).toEqual([{ argv: ['uptime'], workingDirectory: '/srv', timeoutMs: 5000, outputLimit: 100, abortSignal: abortController.signal }]);
    expect(output).toEqual({
      command: ['uptime'],
      exitCode: null,
      signal: 'SIGTERM',
      timedOut: true,
      durationMs: 5000,
      stdout: 'partial',
      stderr: '',
      truncated: true,
      error: 'timed out after 5000 ms',
    });
  });

  it('reports a missing executable to the model', async () => {
    const tool = toolFrom('tools: [{ name: t, description: d, command: [countersign-no-such-command] }]');
    expect(await tool.execute({}, context)).toMatchObject({ error: 'command not found: countersign-no-such-command' });
  });
});
