import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeMcpHttpServer, type FakeMcpHttpServer } from '../../test/fixtures/mcp-http-server.js';
import { ConfigError } from '../config/config-error.js';
import { parseConfigFile } from '../config/config-file.js';
import { loadTools, TOOL_SOURCE_KINDS, type LoadedTools, type ToolSource, type ToolSourceProblem } from './load-tools.js';
import { TOOL_SOURCE_FACTORIES } from './tool-sources.js';
import { defineTool } from './tool-definition.js';

const logger = pino({ level: 'silent' });
const loaded: LoadedTools[] = [];
let fake: FakeMcpHttpServer | undefined;
afterEach(async () => {
  while (loaded.length > 0) await loaded.pop()?.close();
  await fake?.close();
  fake = undefined;
});

const MCP_TOOLS = [
  { name: 'get_status', description: 'Read the status', inputSchema: { type: 'object', properties: { service: { type: 'string' } } }, annotations: { readOnlyHint: true } },
  { name: 'restart', description: 'Restart a service', inputSchema: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] } },
];

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy a version',
  inputSchema: z.object({ version: z.string() }),
  approval: 'always',
  execute: async ({ version }) => ({ deployed: version }),
});

function config(yaml: string) {
  return parseConfigFile(yaml, 'test.yml');
}

async function load(options: Parameters<typeof loadTools>[0]): Promise<LoadedTools> {
  const result = await loadTools(options);
  loaded.push(result);
  return result;
}

function configErrorOf(run: () => Promise<unknown>): Promise<ConfigError> {
  return run().then(
    () => {
      throw new Error('expected a ConfigError');
    },
    (error: unknown) => {
      if (!ConfigError.isInstance(error)) throw error;
      return error;
    },
  );
}

describe('loadTools', () => {
  it('assembles every source in a stable order and knows where each tool came from', async () => {
    fake = await startFakeMcpHttpServer(MCP_TOOLS);
    const tools = await load({
      config: config(`
tools:
  - name: get_pods
    description: List pods
    command: ["kubectl", "get", "pods"]
    approval: never
http:
  bases: [{ url: "https://api.example.com/" }]
mcpServers:
  ops: { url: "${fake.url}" }
`),
      customTools: [deploy],
      logger,
    });

    expect(tools.tools.map((tool) => tool.name)).toEqual(['ask_user', 'get_pods', 'http_request', 'deploy', 'ops.get_status', 'ops.restart']);
    expect(tools.tools.map((tool) => tools.sourceOf(tool.name)?.kind)).toEqual(['builtin', 'command', 'http', 'custom', 'mcp', 'mcp']);
    expect(new Set(tools.tools.map((tool) => tools.sourceOf(tool.name)?.kind))).toEqual(new Set(TOOL_SOURCE_KINDS));
    expect(tools.sourceOf('ops.restart')).toEqual({ kind: 'mcp', id: 'mcp:ops' });
    expect(tools.find('deploy')).toBe(deploy);
    expect(tools.status()).toEqual([
      { source: 'builtin', kind: 'builtin', state: 'ready', tools: ['ask_user'] },
      { source: 'config', kind: 'command', state: 'ready', tools: ['get_pods'] },
      { source: 'http', kind: 'http', state: 'ready', tools: ['http_request'] },
      { source: 'custom', kind: 'custom', state: 'ready', tools: ['deploy'] },
      { source: 'mcp:ops', kind: 'mcp', state: 'ready', tools: ['ops.get_status', 'ops.restart'] },
    ]);
    expect(tools.problems()).toEqual([]);
  });

  it('reports every configuration problem at once: unset variables and duplicate names', async () => {
    const error = await configErrorOf(() =>
      loadTools({
        config: config(`
tools:
  - name: deploy
    description: Deploy from the config
    command: ["deploy"]
http:
  bases: [{ url: "https://api.example.com/", headers: { Authorization: "Bearer \${API_TOKEN}" } }]
mcpServers:
  gh: { url: "https://mcp.example.com/", headers: { Authorization: "Bearer \${GH_TOKEN}" } }
  local: { command: server, env: { KEY: "\${LOCAL_KEY}" } }
`),
        customTools: [deploy],
        logger,
        env: {},
      }),
    );
    expect(error.problems).toEqual([
      { field: 'http.bases[0].headers.Authorization', message: 'environment variable API_TOKEN is not set' },
      { field: 'mcpServers.gh.headers.Authorization', message: 'environment variable GH_TOKEN is not set' },
      { field: 'mcpServers.local.env.KEY', message: 'environment variable LOCAL_KEY is not set' },
      { field: 'tools.deploy', message: 'is defined more than once' },
    ]);
    expect(error.message).not.toContain('Bearer');
  });

  it('refuses a policy rule naming a tool that does not exist, knowing the custom tools and http_request', async () => {
    const error = await configErrorOf(() =>
      loadTools({
        config: config(`
tools:
  - name: restart_service
    description: Restart a service
    command: ["systemctl", "restart", "api"]
http:
  bases: [{ url: "https://api.example.com/" }]
policy:
  rules:
    - { tools: [deploy, http_request, ask_user] }
    - { name: restarts, tools: [restart_servce], approvers: [U0ALICE] }
`),
        customTools: [deploy],
        logger,
      }),
    );
    expect(error.problems).toEqual([
      { field: 'policy.rules[1].tools[0]', message: 'names restart_servce, which is not a tool (did you mean restart_service?); rules[1] ("restarts") would never apply to it' },
    ]);
  });

  it('leaves a rule an MCP server could match to start-up, then warns when no listed tool matches it', async () => {
    fake = await startFakeMcpHttpServer(MCP_TOOLS);
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        callback();
      },
    });
    await load({
      config: config(`
mcpServers:
  ops: { url: "${fake.url}" }
policy:
  rules:
    - { tools: ["ops.get_*", ops.restrat] }
`),
      logger: pino({ level: 'info' }, destination),
    });
    expect(lines.filter((line) => line.event === 'policy-pattern-matches-no-tool').map(({ field, pattern, msg }) => ({ field, pattern, msg }))).toEqual([
      {
        field: 'policy.rules[0].tools[1]',
        pattern: 'ops.restrat',
        msg: 'policy.rules[0].tools[1] (ops.restrat, in rules[0]) matches no tool the MCP servers listed at start-up (did you mean ops.restart?); a server not connected yet lists its tools when it connects',
      },
    ]);
  });

  it('refuses custom tools without a usable name, description or schema, and names that clash on the wire', async () => {
    const error = await configErrorOf(() =>
      loadTools({
        config: config(''),
        customTools: [
          { ...deploy, name: 'has space' },
          { ...deploy, name: 'nodescription', description: ' ' },
          { ...deploy, name: 'a.b' },
          { ...deploy, name: 'a__b' },
        ],
        logger,
      }),
    );
    expect(error.problems).toEqual([
      { field: 'tools.has space', message: 'needs a name of letters, digits, _, - and . (at most 64)' },
      { field: 'tools.nodescription', message: 'needs a description' },
      { field: 'tools.a__b', message: 'is sent to the model as a__b, the same name as a.b' },
    ]);
  });

  it('starts without an MCP server that is down, reports it, and adds its tools to the same array when it comes up', async () => {
    fake = await startFakeMcpHttpServer(MCP_TOOLS);
    await fake.stop();
    const problems: ToolSourceProblem[] = [];
    const recovered: ToolSourceProblem[] = [];
    const changes: string[][] = [];
    const tools = await load({
      config: config(`mcpServers:\n  ops: { url: "${fake.url}", connectTimeoutSeconds: 2 }`),
      logger,
      onSourceProblem: (problem) => problems.push(problem),
      onSourceRecovered: (notice) => recovered.push(notice),
      mcpRetry: { initialDelayMs: 50, maxDelayMs: 100 },
    });
    const array = tools.tools;
    tools.onChange((current) => changes.push(current.map((tool) => tool.name)));

    expect(array.map((tool) => tool.name)).toEqual(['ask_user']);
    expect(problems).toEqual([{ source: 'mcp:ops', message: expect.stringMatching(/^MCP server ops could not be started: /) }]);
    expect(tools.problems()).toEqual(problems);
    expect(tools.status().find((status) => status.source === 'mcp:ops')?.state).not.toBe('ready');

    await fake.restart();
    const deadline = Date.now() + 5000;
    while (tools.find('ops.restart') === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(tools.tools).toBe(array);
    expect(array.map((tool) => tool.name)).toEqual(['ask_user', 'ops.get_status', 'ops.restart']);
    expect(changes.at(-1)).toEqual(['ask_user', 'ops.get_status', 'ops.restart']);
    expect(recovered).toEqual([{ source: 'mcp:ops', message: 'MCP server ops is back (2 tools).' }]);
    expect(tools.problems()).toEqual([]);
  });

  it('does not register an MCP tool whose name another tool already has, and says so', async () => {
    fake = await startFakeMcpHttpServer(MCP_TOOLS);
    const problems: ToolSourceProblem[] = [];
    const shadow = defineTool({ name: 'ops__restart', description: 'Not the MCP one', inputSchema: z.object({}), execute: async () => 'custom' });
    const tools = await load({
      config: config(`mcpServers:\n  ops: { url: "${fake.url}" }`),
      customTools: [shadow],
      logger,
      onSourceProblem: (problem) => problems.push(problem),
    });
    expect(tools.tools.map((tool) => tool.name)).toEqual(['ask_user', 'ops__restart', 'ops.get_status']);
    expect(problems).toEqual([{ source: 'mcp:ops', message: 'ops.restart was not registered: another tool already uses the name ops__restart' }]);
  });

  it('takes a new kind of source as one factory: its tools are listed, clashes skipped and reported, its health shown', async () => {
    let offered = [deploy];
    let changed = () => {};
    const reported: ToolSourceProblem[] = [];
    const tools = await load({
      config: config('tools: []'),
      logger,
      onSourceProblem: (problem) => reported.push(problem),
      sourceFactories: [
        ...TOOL_SOURCE_FACTORIES,
        (context): ToolSource[] => {
          changed = context.onToolsChanged;
          return [{ kind: 'custom', id: 'registry', dynamic: true, tools: () => offered, health: () => ({ state: 'connecting' }) }];
        },
      ],
    });
    expect(tools.tools.map((tool) => tool.name)).toEqual(['ask_user', 'deploy']);
    expect(tools.sourceOf('deploy')).toEqual({ kind: 'custom', id: 'registry' });
    expect(tools.status().find((status) => status.source === 'registry')).toEqual({ source: 'registry', kind: 'custom', state: 'connecting', tools: ['deploy'] });

    offered = [deploy, { ...deploy, name: 'ask_user' }];
    changed();
    expect(tools.tools.map((tool) => tool.name)).toEqual(['ask_user', 'deploy']);
    expect(tools.find('ask_user')?.description).not.toBe(deploy.description);
    expect(reported).toEqual([{ source: 'registry', message: 'ask_user was not registered: another tool already uses the name ask_user' }]);
  });
});
