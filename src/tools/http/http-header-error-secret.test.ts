import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createHttpRequestTool } from './http-request-tool.js';

/**
 * A configured header whose `${VAR}` value holds a line break (a secret read from a file written
 * with `echo`, mounted as an env var) is not a valid header value. `send` builds the request's
 * Headers before its try/catch, so undici's TypeError — which quotes the whole value — leaves
 * `execute` unredacted: the model, the audit trail's `tool-executed` error and any reply quoting
 * it get the password. (An MCP server's header failure is redacted; http_request's is not.)
 */
const PASSWORD = 'S3cretApiPassw0rd-91ab';
const context = { requesterId: 'U1', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call-1', idempotencyKey: 'k1' };

let server: Server;
let origin: string;
let requests = 0;
beforeAll(async () => {
  server = createServer((_request, response) => {
    requests += 1;
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('http_request with a configured header value that is not a valid header', () => {
  it('fails without quoting the secret it was built from', async () => {
    const http = parseConfigFile(
      `
http:
  bases:
    - url: ${origin}/api/
      headers:
        X-Api-Credentials: "\${API_USER}:\${API_PASSWORD}"
`,
      't.yml',
    ).http!;
    // The user name was read from a file with its trailing newline.
    const tool = createHttpRequestTool(http, { env: { API_USER: 'ops-bot\n', API_PASSWORD: PASSWORD } });
    const failure = await tool.execute({ method: 'GET', url: `${origin}/api/status` }, context).then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    expect(requests).toBe(0);
    expect(failure).not.toContain(PASSWORD);
    expect(failure).toContain('X-Api-Credentials');
  });
});
