import { createProcessGroupGuard } from '../command/process-group-guard.js';
import type { ToolSource, ToolSourceFactory } from '../tool-source.js';
import { createMcpServer } from './mcp-server.js';

/**
 * One source per configured MCP server; its tools come and go as it connects, dies and reconnects.
 * Their stdio servers share one guard (and so one watchdog), let go when the last source closes.
 */
export const mcpToolSources: ToolSourceFactory = (context) => {
  const servers = Object.entries(context.config.mcpServers ?? {});
  const processGroups = createProcessGroupGuard({ logger: context.logger, withheldVariables: context.configSecrets.variables });
  let open = servers.length;
  return servers.map(([name, serverConfig]): ToolSource => {
    const id = `mcp:${name}`;
    let closed = false;
    const server = createMcpServer({
      name,
      config: serverConfig,
      env: context.env,
      configSecrets: context.configSecrets,
      logger: context.logger,
      problems: context.problems,
      ...(context.mcpRetry ? { retry: context.mcpRetry } : {}),
      onToolsChanged: context.onToolsChanged,
      onProblem: (message, problem) => context.onProblem(id, message, problem),
      onRecovered: (message) => context.onRecovered(id, message),
      processGroups,
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
          ...(status.warnings === undefined ? {} : { warnings: status.warnings }),
        };
      },
      start: () => server.start(),
      async close() {
        await server.close();
        if (closed) return;
        closed = true;
        open -= 1;
        if (open === 0) processGroups.close();
      },
    };
  });
};
