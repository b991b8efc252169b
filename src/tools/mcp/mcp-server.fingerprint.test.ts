import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeMcpHttpServer, type FakeMcpHttpServer } from '../../../test/fixtures/mcp-http-server.js';
import { parseConfigFile } from '../../config/config-file.js';
import { definitionFingerprintOf } from '../definition-fingerprint.js';
import { createHttpRequestTool } from '../http/http-request-tool.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

/**
 * The definition fingerprint of an MCP tool names its server with its env and header templates as
 * the config writes them. Before the fix it named them by their keys only, so a deploy that points
 * a stdio server at another cluster (`env: { KUBE_CONTEXT: prod }` instead of `staging`) or turns
 * a header switch (`X-Dry-Run: "false"`) left every waiting approval valid, while http_request's
 * fingerprint changes with its header templates (definition-fingerprint.test.ts). The values here
 * are templates / literals from the config, never a secret read into them.
 */
const STDIO_SERVER = join(import.meta.dirname, '../../../test/fixtures/mcp-stdio-server.mjs');
const logger = pino({ level: 'silent' });
const running: Array<{ close(): Promise<void> }> = [];
let fake: FakeMcpHttpServer | undefined;
afterEach(async () => {
  while (running.length > 0) await running.pop()?.close();
  await fake?.close();
  fake = undefined;
});

function serverConfig(yaml: string) {
  return Object.values(parseConfigFile(`mcpServers:\n  s:\n${yaml.replace(/^/gm, '    ')}`, 'test.yml').mcpServers!)[0]!;
}

async function fingerprintFor(yaml: string, env: Record<string, string | undefined> = {}): Promise<string> {
  const handle: McpServerHandle = createMcpServer({
    name: 'k8s',
    config: serverConfig(yaml),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    logger,
    problems: [],
    onToolsChanged: () => {},
    onProblem: () => {},
    onRecovered: () => {},
  });
  running.push(handle);
  await handle.start();
  const tool = handle.tools()[0];
  if (!tool) throw new Error(`no tools: ${JSON.stringify(handle.status())}`);
  return definitionFingerprintOf(tool);
}

const stdioYaml = (context: string) => `command: ${JSON.stringify(process.execPath)}\nargs: [${JSON.stringify(STDIO_SERVER)}]\nenv: { KUBE_CONTEXT: ${context} }`;

describe('what an MCP tool fingerprint covers', () => {
  it('the same stdio config started again gives the same fingerprint (stable across reconnects/restarts)', async () => {
    expect(await fingerprintFor(stdioYaml('staging'))).toBe(await fingerprintFor(stdioYaml('staging')));
  });

  it('a secret read into the env does not change it', async () => {
    const yaml = `command: ${JSON.stringify(process.execPath)}\nargs: [${JSON.stringify(STDIO_SERVER)}]\nenv: { TOKEN: "\${K8S_TOKEN}" }`;
    expect(await fingerprintFor(yaml, { K8S_TOKEN: 'one' })).toBe(await fingerprintFor(yaml, { K8S_TOKEN: 'rotated' }));
  });

  it('a stdio server moved from the staging to the prod cluster by its env is a different tool', async () => {
    expect(await fingerprintFor(stdioYaml('prod'))).not.toBe(await fingerprintFor(stdioYaml('staging')));
  });

  it('an HTTP server whose header template changed (X-Dry-Run "true" -> "false") is a different tool, as for http_request', async () => {
    fake = await startFakeMcpHttpServer([{ name: 'delete_item', inputSchema: { type: 'object', properties: { id: { type: 'number' } } } }]);
    const dry = await fingerprintFor(`url: ${fake.url}\nheaders: { X-Dry-Run: "true" }`);
    const wet = await fingerprintFor(`url: ${fake.url}\nheaders: { X-Dry-Run: "false" }`);

    // http_request, for comparison: its fingerprint does change with the same header edit.
    const httpTool = (value: string) => createHttpRequestTool(parseConfigFile(`http:\n  bases:\n    - url: https://api.example.com/v1/\n      headers: { X-Dry-Run: "${value}" }\n`, 'countersign.yml').http!, { env: {} });
    expect(await definitionFingerprintOf(httpTool('false'))).not.toBe(await definitionFingerprintOf(httpTool('true')));

    expect(wet).not.toBe(dry);
  });

  it('an HTTP server: a secret read into a header template does not change it', async () => {
    fake = await startFakeMcpHttpServer([{ name: 'delete_item', inputSchema: { type: 'object', properties: { id: { type: 'number' } } } }]);
    const yaml = `url: ${fake.url}\nheaders: { Authorization: "Bearer \${API_TOKEN}" }`;
    expect(await fingerprintFor(yaml, { API_TOKEN: 'token-one' })).toBe(await fingerprintFor(yaml, { API_TOKEN: 'token-rotated' }));
  });
});
