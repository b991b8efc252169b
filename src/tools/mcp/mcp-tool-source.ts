import type { ToolSource, ToolSourceFactory } from '../tool-source.js';
import { createMcpServer } from './mcp-server.js';

/** One source per configured MCP server; its tools come and go as it connects, dies and reconnects. */
export const mcpToolSources: ToolSourceFactory = (context) =>
  Object.entries(context.config.mcpServers ?? {}).map(([name, serverConfig]): ToolSource => {
    const id = `mcp:${name}`;
    const server = createMcpServer({
      name,
      config: serverConfig,
      env: context.env,
      configSecrets: context.configSecrets,
      logger: context.logger,
      problems: context.problems,
      ...(context.mcpRetry ? { retry: context.mcpRetry } : {}),
      onToolsChanged: context.onToolsChanged,
      onProblem: (message) => context.onProblem(id, message),
      onRecovered: (message) => context.onRecovered(id, message),
    });
    return {
      kind: 'mcp',
      id,
      dynamic: true,
      tools: () => server.tools(),
      health() {
        const status = server.status();
        return {
          state: status.state === 'connected' ? 'ready' : status.state,
          ...(status.error === undefined ? {} : { error: status.error }),
          ...(status.nextRetryAt === undefined ? {} : { nextRetryAt: status.nextRetryAt }),
        };
      },
      start: () => server.start(),
      close: () => server.close(),
    };
  });
