import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { problemsOf } from '../../config/config-problems.test-support.js';
import type { ToolContext } from '../tool-definition.js';
import { createCommandTool } from './command-tool.js';
import type { CommandResult, RunCommandOptions } from './run-command.js';

const context: ToolContext = { requesterId: 'U1', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'c1', idempotencyKey: 'k1' };
const exited: CommandResult = { exitCode: 0, signal: null, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 1, timedOut: false };

/** A command tool from `countersign.yml` text whose runs are recorded instead of spawned. */
function toolFrom(yamlText: string) {
  const [toolConfig] = parseConfigFile(yamlText, 'countersign.yml').tools;
  const ran: string[][] = [];
  const tool = createCommandTool(toolConfig!, {
    runCommand: async (options: RunCommandOptions) => {
      ran.push(options.argv);
      return exited;
    },
  });
  return { tool, ran };
}

function toolWith({ command, parameters }: { command: string; parameters: string }) {
  return toolFrom(`
tools:
  - name: t
    description: d
    command: ${command}
    parameters:
${parameters}
`);
}

const stopProcess = `
tools:
  - name: stop_process
    description: Stop one process
    command: ["kill", "-TERM", "{pid}"]
    parameters:
      pid: { type: number, integer: true, description: Process id }
`;

/**
 * README: values may not start with `-` (no smuggled `--all`). A number standing first in an
 * argument is held to it too: `kill -TERM -1` signals every process of the bot's user, while the
 * card only shows `"pid": -1`.
 */
describe('a number that starts an argument', () => {
  it('is refused when negative, and nothing runs', async () => {
    const { tool, ran } = toolFrom(stopProcess);
    // What the model's input is validated against (the AI SDK) and what an Edit is validated against.
    const result = tool.inputSchema.safeParse({ pid: -1 });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ path: ['pid'], message: expect.stringMatching(/^must not be negative/) });
    await expect(tool.execute({ pid: -1 }, context)).rejects.toThrow(/must not be negative/);
    expect(ran).toEqual([]);
  });

  it('is refused in every negative form, integer or not; 0 and -0 run as "0"', async () => {
    const { tool, ran } = toolWith({ command: '["sleep", "{seconds}"]', parameters: '      seconds: { type: number }' });
    for (const value of [-1e3, -0.5, -1e-7, Number.MIN_SAFE_INTEGER]) expect(tool.inputSchema.safeParse({ seconds: value }).success).toBe(false);
    await tool.execute({ seconds: -0 }, context);
    await tool.execute({ seconds: 0 }, context);
    await tool.execute({ seconds: 1e3 }, context);
    expect(ran).toEqual([
      ['sleep', '0'],
      ['sleep', '0'],
      ['sleep', '1000'],
    ]);
  });

  it('is refused when only placeholders come before it in the element', () => {
    const { tool } = toolWith({ command: '["echo", "{prefix}{count}"]', parameters: '      prefix: { type: string }\n      count: { type: number }' });
    expect(tool.inputSchema.safeParse({ prefix: '', count: -1 }).success).toBe(false);
    expect(tool.inputSchema.safeParse({ prefix: '', count: 1 }).success).toBe(true);
  });

  it('may be negative with allowLeadingDash: true', async () => {
    const { tool, ran } = toolWith({ command: '["nice", "-n", "{adjustment}", "true"]', parameters: '      adjustment: { type: number, integer: true, minimum: -20, maximum: 19, allowLeadingDash: true }' });
    await tool.execute({ adjustment: -5 }, context);
    expect(ran).toEqual([['nice', '-n', '-5', 'true']]);
  });
});

describe('a number inside an argument', () => {
  it('may be negative: the argument starts with the template text', async () => {
    const { tool, ran } = toolWith({ command: '["journalctl", "--lines={lines}", "--offset={offset}"]', parameters: '      lines: { type: number }\n      offset: { type: number, minimum: -100 }' });
    await tool.execute({ lines: -1, offset: -5 }, context);
    expect(ran).toEqual([['journalctl', '--lines=-1', '--offset=-5']]);
  });
});

describe('the config check', () => {
  it('refuses a negative minimum or default of a number that starts an argument, naming the field', () => {
    const problems = problemsOf(`
tools:
  - name: t
    description: d
    command: ["tool", "{delta}", "--at={delta}", "{start}", "{fine}"]
    parameters:
      delta: { type: number, minimum: -10 }
      start: { type: number, default: -1 }
      fine: { type: number, minimum: -10, allowLeadingDash: true }
`);
    expect(problems.map((problem) => `${problem.field}: ${problem.message}`)).toEqual([
      'countersign.yml tools[0].parameters.delta.minimum: lets {delta} be negative, but it starts command[1], where "-" would make it an option; set allowLeadingDash: true if the command takes negative numbers there, or keep minimum at 0 or above',
      'countersign.yml tools[0].parameters.start.default: lets {start} be negative, but it starts command[3], where "-" would make it an option; set allowLeadingDash: true if the command takes negative numbers there, or keep default at 0 or above',
    ]);
  });

  it('accepts a number that starts an argument with no minimum: its negative values are refused when called', () => {
    expect(() => parseConfigFile(stopProcess, 'countersign.yml')).not.toThrow();
  });
});
