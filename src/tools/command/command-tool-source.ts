import { createStaticToolSource, type ToolSourceFactory } from '../tool-source.js';
import { createDirectCommandRunner } from './direct-command-runner.js';
import { withholding } from './command-environment.js';
import { createCommandSlots, DEFAULT_MAX_RUNNING_COMMANDS, withCommandSlots } from './command-slots.js';
import { createCommandTool } from './command-tool.js';
import type { RunCommand } from './run-command.js';
import { createSpawnerCommandRunner } from './spawner-client.js';

/**
 * The config file's `tools:` entries, each a command run with an argv template (never a shell), by
 * the spawner process unless `commandRunner` is `direct`, as many at once as `commandSlots` let
 * start. Closing the source stops the spawner.
 */
export const commandToolSources: ToolSourceFactory = ({ config, logger, commandRunner = 'spawner', commandSlots, configSecrets }) => {
  if (config.tools.length === 0) return [];
  const withheld = configSecrets.variables;
  const runner = commandRunner === 'spawner' ? createSpawnerCommandRunner({ logger, withheldVariables: withheld }) : createDirectCommandRunner({ logger, withheldVariables: withheld });
  // The secrets other sources read with ${VAR} are not this command's to see.
  const run: RunCommand = (options) => runner.run({ ...options, environment: withholding(withheld, options.environment) });
  const runCommand = withCommandSlots(run, commandSlots ?? createCommandSlots({ maxRunning: DEFAULT_MAX_RUNNING_COMMANDS }));
  const source = createStaticToolSource(
    { kind: 'command', id: 'config' },
    config.tools.map((tool) => createCommandTool(tool, { runCommand })),
  );
  return [{ ...source, close: runner.close }];
};
