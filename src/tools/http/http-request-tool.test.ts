import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/config-error.js';
import { parseConfigFile } from '../../config/config-file.js';
import type { HttpConfig } from '../../config/http-config-schema.js';
import { evaluateCallPolicy } from '../../approvals/evaluate-call-policy.js';
import { findAllowedBase } from './allowed-base.js';
import { createHttpRequestTool } from './http-request-tool.js';

const SECRET = 'ghp_s3cr3t-token-value';
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call_1', idempotencyKey: 'k1' };

let server: Server;
let origin: string;
const received: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
    const path = (request.url ?? '').split('?')[0];
    if (path === '/api/echo') {
      response.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'session=abc', 'x-ratelimit-remaining': '59' });
      response.end(JSON.stringify({ method: request.method, headers: request.headers, body }));
    } else if (path === '/api/big') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('x'.repeat(50_000));
    } else if (path === '/api/slow') {
      setTimeout(() => response.end('late'), 3000);
    } else if (path === '/api/redirect') {
      response.writeHead(302, { location: 'http://elsewhere.invalid/steal' }).end();
    } else if (path === '/api/pad') {
      // `before` characters of padding, then the bearer token in the form asked for, then more.
      const query = new URL(request.url ?? '', 'http://x').searchParams;
      const token = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(`${'x'.repeat(Number(query.get('before')))}${echoedForm(token, query.get('form') ?? 'raw')}${'y'.repeat(200)}`);
    } else if (path === '/api/binary') {
      response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(300));
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function httpConfig(overrides: Partial<HttpConfig> = {}): HttpConfig {
  const config = parseConfigFile(
    `
http:
  bases:
    - url: ${origin}/api/
      description: the test API
      headers:
        Authorization: "Bearer \${TEST_API_TOKEN}"
        X-Team: platform
`,
    'test.yml',
  ).http!;
  return { ...config, ...overrides };
}

const tool = (overrides: Partial<HttpConfig> = {}) => createHttpRequestTool(httpConfig(overrides), { env: { TEST_API_TOKEN: SECRET } });

/** A token with characters that every encoding changes. */
const ODD_SECRET = 'sk/live+4f9a=Q7 z!~(x)';
/** How an API might echo the token it was sent. */
const ECHOED_FORMS = {
  raw: (token: string) => token,
  json: (token: string) => JSON.stringify(token).slice(1, -1),
  'json-slashes': (token: string) => JSON.stringify(token).slice(1, -1).replaceAll('/', '\\/'),
  uri: (token: string) => encodeURIComponent(token),
  form: (token: string) => new URLSearchParams({ t: token }).toString().slice(2),
  base64: (token: string) => Buffer.from(token).toString('base64'),
  base64url: (token: string) => Buffer.from(token).toString('base64url'),
  // Inside a longer encoded value (`user:token`, as in a Basic header): only the part made of the
  // token's own bits identifies it, so that is what must never show.
  'base64-inside': (token: string) => Buffer.from(`ops:${token}`).toString('base64'),
};
type EchoedForm = keyof typeof ECHOED_FORMS;
function echoedForm(token: string, form: string): string {
  return ECHOED_FORMS[form as EchoedForm](token);
}
/** The part of an echoed form that must never reach the model, not even in part. */
function secretPart(form: EchoedForm, token: string): string {
  if (form !== 'base64-inside') return ECHOED_FORMS[form](token);
  // "ops:" is 4 bytes: the token starts 1 byte into a 3-byte group, so the first 2 characters of
  // its part mix in "ops:" bits; the last one mixes in padding.
  const encoded = ECHOED_FORMS[form](token);
  const start = Math.ceil((4 * 8) / 6);
  return encoded.slice(start, Math.floor(((4 + Buffer.byteLength(token)) * 8) / 6));
}
/** Every piece of `secret` of 4 or more characters that `text` contains, read from its start (a prefix) or its end (a suffix). */
function leakedPieces(text: string, secret: string): string[] {
  const pieces: string[] = [];
  for (let length = 4; length <= secret.length; length += 1) {
    if (text.includes(secret.slice(0, length))) pieces.push(secret.slice(0, length));
    if (text.includes(secret.slice(-length))) pieces.push(secret.slice(-length));
  }
  return pieces;
}

describe('http_request', () => {
  it('sends a request under an allowed base with the configured headers and returns a redacted response', async () => {
    received.length = 0;
    const output = await tool().execute({ method: 'GET', url: `${origin}/api/echo?q=1`, headers: { Accept: 'application/json' } }, context);

    expect(received).toHaveLength(1);
    expect(received[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(received[0]!.headers['x-team']).toBe('platform');
    expect(received[0]!.headers.accept).toBe('application/json');
    expect(output.status).toBe(200);
    expect(output.headers).toEqual({ 'content-type': 'application/json', 'x-ratelimit-remaining': '59' });
    expect(JSON.stringify(output)).not.toContain(SECRET);
    expect(JSON.parse(output.body).headers.authorization).toBe('[redacted]');
    expect(output.truncated).toBe(false);
  });

  it('refuses a URL outside the bases in the input schema, before any approval or network call', async () => {
    received.length = 0;
    const http = tool();
    for (const url of [`${origin}/admin`, `${origin}/api/../admin`, `${origin}/api/%2e%2e/admin`, `${origin}/api/..%2Fadmin`, 'http://evil.example/api/echo', `http://user:pw@${origin.slice(7)}/api/echo`]) {
      const parsed = http.inputSchema.safeParse({ method: 'GET', url });
      expect(parsed.success, url).toBe(false);
      // `..` is refused for its spelling before the base is looked at (see http-request-url-rules.test.ts).
      await expect(http.execute({ method: 'GET', url }, context)).rejects.toThrow(/allowed base|"\.\." path segments/);
    }
    expect(received).toEqual([]);
  });

  it('needs approval for methods that change things, not for GET and HEAD, and policy outranks that', async () => {
    const http = tool();
    const { policy } = parseConfigFile('', 'test.yml');
    const needs = async (method: string, rules = policy) =>
      (await evaluateCallPolicy({ policy: rules, definition: http, toolName: 'http_request', input: { method, url: `${origin}/api/echo` }, context })).needsApproval;
    expect(await needs('GET')).toBe(false);
    expect(await needs('HEAD')).toBe(false);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) expect(await needs(method)).toBe(true);

    const strict = parseConfigFile('policy: { rules: [{ tools: [http_request], approval: always }] }', 'test.yml').policy;
    expect(await needs('GET', strict)).toBe(true);
    const relaxed = parseConfigFile('policy: { rules: [{ tools: [http_request], approval: { when: [{ field: method, equals: DELETE }] } }] }', 'test.yml').policy;
    expect(await needs('POST', relaxed)).toBe(false);
    expect(await needs('DELETE', relaxed)).toBe(true);
  });

  it('sends a body with a guessed content type, and refuses a body on GET', async () => {
    received.length = 0;
    const output = await tool().execute({ method: 'POST', url: `${origin}/api/echo`, body: '{"replicas":3}' }, context);
    expect(received[0]).toMatchObject({ method: 'POST', body: '{"replicas":3}' });
    expect(received[0]!.headers['content-type']).toBe('application/json');
    expect(output.status).toBe(200);
    expect(tool().inputSchema.safeParse({ method: 'GET', url: `${origin}/api/echo`, body: 'x' }).success).toBe(false);
  });

  it('does not let the model override or smuggle configured and reserved headers', () => {
    const http = tool();
    for (const headers of [{ authorization: 'Bearer mine' }, { Host: 'evil.example' }, { 'bad header': 'x' }]) {
      expect(http.inputSchema.safeParse({ method: 'GET', url: `${origin}/api/echo`, headers }).success, JSON.stringify(headers)).toBe(false);
    }
  });

  it('cuts the body for the model and stops reading at the byte cap', async () => {
    const small = await tool({ bodyLimit: 100 }).execute({ method: 'GET', url: `${origin}/api/big` }, context);
    expect(small.truncated).toBe(true);
    expect(small.body.startsWith('x'.repeat(100))).toBe(true);
    expect(small.body).toContain('cut: 49900 more characters');

    const capped = await tool({ maxResponseBytes: 2048, bodyLimit: 100_000 }).execute({ method: 'GET', url: `${origin}/api/big` }, context);
    expect(capped.bytes).toBe(2048);
    expect(capped.truncated).toBe(true);
  });

  it('redacts before it cuts: a secret echoed across maxResponseBytes never reaches the model, not even in part', async () => {
    const cap = 1000;
    const http = createHttpRequestTool(httpConfig({ maxResponseBytes: cap, bodyLimit: 100_000 }), { env: { TEST_API_TOKEN: ODD_SECRET } });
    for (const form of Object.keys(ECHOED_FORMS) as EchoedForm[]) {
      const echoed = ECHOED_FORMS[form](ODD_SECRET);
      const secret = secretPart(form, ODD_SECRET);
      // Every split of the echoed value by the cap, and just before and after it.
      for (let inside = 0; inside <= echoed.length; inside += 1) {
        const before = cap - inside;
        const output = await http.execute({ method: 'GET', url: `${origin}/api/pad?before=${before}&form=${form}` }, context);
        const where = `${form}, ${inside} characters before the cap`;
        expect(output.truncated, where).toBe(true);
        expect(output.bytes, where).toBe(cap);
        expect(leakedPieces(output.body, secret), where).toEqual([]);
        // What precedes the secret is all there; the secret, if it started before the cap, is one marker.
        if (inside === 0) expect(output.body, where).toBe('x'.repeat(cap));
        else if (form !== 'base64-inside') expect(output.body, where).toBe(`${'x'.repeat(before)}[redacted]`);
        else expect(output.body.startsWith('x'.repeat(before)), where).toBe(true);
      }
    }
  });

  it('gives up after the timeout', async () => {
    const started = Date.now();
    await expect(tool({ timeoutSeconds: 0.3 }).execute({ method: 'GET', url: `${origin}/api/slow` }, context)).rejects.toThrow(/did not answer within 0.3 s/);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('does not follow redirects (they could leave the allowed bases with our headers)', async () => {
    received.length = 0;
    const output = await tool().execute({ method: 'GET', url: `${origin}/api/redirect` }, context);
    expect(output.status).toBe(302);
    expect(output.headers.location).toBe('http://elsewhere.invalid/steal');
    expect(received).toHaveLength(1);
  });

  it('names binary bodies instead of returning them', async () => {
    const output = await tool().execute({ method: 'GET', url: `${origin}/api/binary` }, context);
    expect(output.body).toBe('[300 bytes of image/png not shown]');
  });

  it('reports every unset variable at build time, naming the variable and never a value', () => {
    let error: unknown;
    try {
      createHttpRequestTool(httpConfig(), { env: {} });
    } catch (caught) {
      error = caught;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems).toEqual([{ field: 'http.bases[0].headers.Authorization', message: 'environment variable TEST_API_TOKEN is not set' }]);
  });

  it('never puts the secret in the description or the JSON schema the model sees', async () => {
    const http = tool();
    expect(http.description).toContain(`${origin}/api/ — the test API`);
    expect(http.description + JSON.stringify(http.inputSchema.toJSONSchema())).not.toContain(SECRET);
  });
});

describe('findAllowedBase', () => {
  const bases = [{ url: 'https://api.example.com/v1/' }, { url: 'https://status.example.com/' }];
  it.each([
    ['https://api.example.com/v1/items', true],
    ['https://api.example.com/v1', true],
    ['https://api.example.com/v2/items', false],
    ['https://api.example.com/v1/../admin', false],
    ['http://api.example.com/v1/items', false],
    ['https://api.example.com:8443/v1/items', false],
    ['https://api.example.com.evil.io/v1/items', false],
    ['https://status.example.com/', true],
    ['not a url', false],
  ])('%s -> %s', (url, allowed) => {
    expect(findAllowedBase(bases, url) !== undefined).toBe(allowed);
  });
});
