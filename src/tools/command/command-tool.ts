import { z } from 'zod';
import type { CommandToolConfig } from '../../config/config-schema.js';
import { wholeMilliseconds } from '../../config/duration.js';
import type { ExecutableToolDefinition } from '../tool-definition.js';
import { ToolNotStartedError } from '../tool-not-started-error.js';
import { fingerprintOf } from '../definition-fingerprint.js';
import { renderArgv } from './argv-template.js';
import { isCommandNotStarted } from './command-runner.js';
import { parametersToZodSchema, type ParameterValues } from './parameters-schema.js';
import { runCommand as defaultRunCommand, type CommandResult, type RunCommandOptions } from './run-command.js';

/** What the model sees after a command tool runs. */
export interface CommandToolOutput {
  /** The argv that actually ran, so the model (and the thread) can quote it exactly. */
  command: string[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
  error?: string;
}

export interface CreateCommandToolOptions {
  /** Injectable so tests and dry runs need not spawn processes. */
  runCommand?: (options: RunCommandOptions) => Promise<CommandResult>;
}

/** Turns one `tools:` entry of the config file into a tool the agent can call. */
export function createCommandTool(
  toolConfig: CommandToolConfig,
  { runCommand = defaultRunCommand }: CreateCommandToolOptions = {},
): ExecutableToolDefinition<ParameterValues, CommandToolOutput> & { inputSchema: ReturnType<typeof parametersToZodSchema> } {
  const inputSchema = parametersToZodSchema(toolConfig.parameters, { command: toolConfig.command });
  return {
    name: toolConfig.name,
    description: toolConfig.description,
    inputSchema,
    approval: toolConfig.approval,
    // What decides the argv and how it runs; output limits and the description do not.
    definitionFingerprint: fingerprintOf({
      kind: 'command',
      command: toolConfig.command,
      parameters: toolConfig.parameters,
      workingDirectory: toolConfig.workingDirectory ?? null,
      timeoutSeconds: toolConfig.timeoutSeconds,
    }),
    async execute(input, context) {
      // Validated again here because approved input may have been edited since the model sent it.
      // Refused before anything is spawned: the turn records the call as not run.
      const parsed = inputSchema.safeParse(input);
      if (!parsed.success) {
        throw new ToolNotStartedError({ toolName: toolConfig.name, reason: 'invalid-input', message: `Invalid input for ${toolConfig.name}:\n${z.prettifyError(parsed.error)}` });
      }
      const values = parsed.data;
      const argv = renderArgv(toolConfig.command, values);
      let result: CommandResult;
      try {
        result = await runCommand({
          argv,
          ...(toolConfig.workingDirectory !== undefined && { workingDirectory: toolConfig.workingDirectory }),
          timeoutMs: wholeMilliseconds(toolConfig.timeoutSeconds, 's'),
          outputLimit: toolConfig.outputLimit,
          ...(context.abortSignal !== undefined && { abortSignal: context.abortSignal }),
          ...(context.assertHeld !== undefined && { beforeStart: context.assertHeld }),
        });
      } catch (error) {
        // The runner is closed (the bot is stopping) and spawned nothing: the turn records the call as not run.
        if (isCommandNotStarted(error)) throw new ToolNotStartedError({ toolName: toolConfig.name, reason: 'runner-closed', message: `${error.message}; ${toolConfig.name} did not run.` });
        throw error;
      }
      // Aborted or timed out before it was let start, or no watchdog to hold it: none of its code ran.
      if (result.neverRan) throw new ToolNotStartedError({ toolName: toolConfig.name, reason: 'command-not-started', message: `${result.error ?? 'not started'}; ${toolConfig.name} did not run.` });
      return {
        command: argv,
        exitCode: result.exitCode,
        signal: result.signal,
        timedOut: result.timedOut,
        durationMs: result.durationMs,
        stdout: result.stdout,
        stderr: result.stderr,
        truncated: result.stdoutTruncated || result.stderrTruncated,
        ...(result.error !== undefined && { error: result.error }),
      };
    },
  };
}
