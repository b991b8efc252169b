import { askUserTool } from './ask-user.js';
import { commandToolSources } from './command/command-tool-source.js';
import { customToolSources } from './custom/custom-tool-source.js';
import { httpToolSources } from './http/http-tool-source.js';
import { mcpToolSources } from './mcp/mcp-tool-source.js';
import { createStaticToolSource, type ToolSourceFactory } from './tool-source.js';

/**
 * Every tool source, in the order its tools are listed to the model. A new source is a folder
 * under `tools/` exporting a `ToolSourceFactory`, and one line here.
 */
export const TOOL_SOURCE_FACTORIES: readonly ToolSourceFactory[] = [
  () => [createStaticToolSource({ kind: 'builtin', id: 'builtin' }, [askUserTool])],
  commandToolSources,
  httpToolSources,
  customToolSources,
  mcpToolSources,
];
