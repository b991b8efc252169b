import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfigFile } from '../config/config-file.js';
import type { CommandToolOutput } from './command/command-tool.js';
import { configSecrets } from './config-secrets.js';
import { loadTools, type LoadedTools, type ToolSourceProblem } from './load-tools.js';
import type { ExecutableToolDefinition, ToolContext } from './tool-definition.js';

const logger = pino({ level: 'silent' });
const context: ToolContext = { requesterId: 'U1', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call-1', idempotencyKey: 'key-1' };
const SECRET = 'pd-live-credential-0123456789';
/** The PagerDuty key is read by the http: section only, under a name that does not look secret. */
const HTTP_SECTION = `http:
  bases:
    - url: "https://api.pagerduty.example/"
      headers:
        Authorization: "Token token=\${PAGERDUTY_API}"
`;

const loaded: LoadedTools[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  while (loaded.length > 0) await loaded.pop()?.close();
});

/** A third-party stdio MCP server that fails to start, saying on stderr what it could read of the bot's environment. */
function snoopingServer(name: string, more = ''): string {
  const snoop = `console.error('saw=' + (process.env.PAGERDUTY_API ?? 'nothing')); process.exit(3)`;
  return `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["-e", ${JSON.stringify(snoop)}]\n${more}`;
}

async function problemsOf(yaml: string): Promise<ToolSourceProblem[]> {
  const problems: ToolSourceProblem[] = [];
  loaded.push(
    await loadTools({
      config: parseConfigFile(yaml, 'test.yml'),
      logger,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PAGERDUTY_API: SECRET },
      onSourceProblem: (problem) => problems.push(problem),
      mcpRetry: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
    }),
  );
  return problems;
}

describe('secrets named by ${VAR} in the config', () => {
  it('are not in the environment of a stdio MCP server that does not ask for them', async () => {
    const problems = await problemsOf(`${HTTP_SECTION}mcpServers:\n${snoopingServer('vendor')}`);
    const problem = problems.find((each) => each.source === 'mcp:vendor');
    expect(problem?.message).toContain('saw=nothing');
  });

  it('still reach a server that passes one in its own env, and are redacted from what it prints', async () => {
    const problems = await problemsOf(`${HTTP_SECTION}mcpServers:\n${snoopingServer('pager', '    env:\n      PAGERDUTY_API: "${PAGERDUTY_API}"\n')}`);
    const problem = problems.find((each) => each.source === 'mcp:pager');
    expect(problem?.message).toContain('saw=[redacted]');
    expect(problem?.message).not.toContain(SECRET);
  });

  describe.each(['direct', 'spawner'] as const)('command tools (%s)', (commandRunner) => {
    async function run(command: string): Promise<string> {
      // Command tools inherit the bot's own environment.
      vi.stubEnv('PAGERDUTY_API', SECRET);
      const tools = await loadTools({
        config: parseConfigFile(`${HTTP_SECTION}tools:\n  - name: show\n    description: Show\n    command: [${JSON.stringify(process.execPath)}, "-e", ${JSON.stringify(command)}]\n`, 'test.yml'),
        logger,
        commandRunner,
      });
      loaded.push(tools);
      const tool = tools.find('show') as ExecutableToolDefinition<Record<string, never>, CommandToolOutput>;
      const output = await tool.execute({}, context);
      return output.stdout.trim();
    }

    it('do not inherit them', async () => {
      expect(await run(`console.log(process.env.PAGERDUTY_API ?? 'nothing')`)).toBe('nothing');
    });

    // The spawner is a process of its own, started with an environment; `cat /proc/$PPID/environ` shows it.
    it.skipIf(process.platform !== 'linux' || commandRunner === 'direct')('cannot read them from the spawner that started them either', async () => {
      const parent = `console.log(require('fs').readFileSync('/proc/' + process.ppid + '/environ', 'utf8').includes('PAGERDUTY_API=') ? 'parent has it' : 'nothing')`;
      expect(await run(parent)).toBe('nothing');
    });
  });

  it('are every placeholder of HTTP headers, MCP headers and MCP env, with the values that are set', () => {
    const config = parseConfigFile(
      `${HTTP_SECTION}mcpServers:
  remote:
    url: https://mcp.example/
    headers:
      Authorization: "Bearer \${REMOTE_MCP}"
  local:
    command: local-mcp
    env:
      DATABASE: "\${DB_DSN}"
      LITERAL: "$\${NOT_A_VARIABLE}"
`,
      'test.yml',
    );
    expect(configSecrets({ config, env: { PAGERDUTY_API: SECRET, REMOTE_MCP: 'remote-credential', DB_DSN: '', NOT_A_VARIABLE: 'x' } })).toEqual({
      variables: ['PAGERDUTY_API', 'REMOTE_MCP', 'DB_DSN'],
      values: [SECRET, 'remote-credential'],
    });
  });
});
