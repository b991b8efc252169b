import { createStaticToolSource, type ToolSourceFactory } from '../tool-source.js';
import { createCommandTool } from './command-tool.js';

/** The config file's `tools:` entries, each a command run with an argv template (never a shell). */
export const commandToolSources: ToolSourceFactory = ({ config }) =>
  config.tools.length === 0 ? [] : [createStaticToolSource({ kind: 'command', id: 'config' }, config.tools.map((tool) => createCommandTool(tool)))];
