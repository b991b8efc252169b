import { isAbsolute, resolve } from 'node:path';
import { loadConfigFile } from '../../config/config-file.js';
import type { CountersignConfig } from '../../config/config-schema.js';
import { packageRoot, sandboxSourcePath } from '../package-root.js';

/** Where the sandbox's example config lives, whether countersign runs from src/ or dist/. */
export function sandboxExampleConfigPath(): string {
  return sandboxSourcePath('example', 'countersign.sandbox.yml');
}

/**
 * The sandbox's example config, loaded with the real loader, its command tools made to work from
 * any working directory: the file's relative paths are relative to the repository root (where
 * `npm start` runs), and a bot started elsewhere would not find the scripts.
 */
export async function loadSandboxExampleConfig(): Promise<CountersignConfig> {
  const config = await loadConfigFile(sandboxExampleConfigPath());
  return anchorCommandTools({ config, root: packageRoot(), node: process.execPath });
}

/**
 * Resolves each command tool's relative `workingDirectory` against `root`, and runs `node` tools
 * with `node` (the running Node.js): the `node` first on PATH may be another, older one.
 */
export function anchorCommandTools({ config, root, node }: { config: CountersignConfig; root: string; node: string }): CountersignConfig {
  return {
    ...config,
    tools: config.tools.map((tool) => ({
      ...tool,
      command: tool.command[0] === 'node' ? [node, ...tool.command.slice(1)] : tool.command,
      ...(tool.workingDirectory === undefined || isAbsolute(tool.workingDirectory) ? {} : { workingDirectory: resolve(root, tool.workingDirectory) }),
    })),
  };
}
