import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolApproval, type GateBasis } from '../../agent/tool-set.js';
import { evaluateCallPolicy } from '../../approvals/evaluate-call-policy.js';
import { parseConfigFile } from '../../config/config-file.js';
import { createToolSchemas } from '../tool-schemas.js';
import { canonicalUrl } from './canonical-url.js';
import { createHttpRequestTool } from './http-request-tool.js';

// A policy rule on `url` must catch every spelling of the URL it protects: the rule, the card,
// the approval and the request all get the one canonical spelling, or the call is refused.
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };
let server: Server;
let origin: string;
const received: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    received.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type ApprovalGate = (call: { toolCall: { toolCallId: string; toolName: string; input: unknown } }) => Promise<unknown>;

function setup() {
  const config = parseConfigFile(
    `
http:
  bases:
    - url: ${origin}/api/
policy:
  rules:
    - name: secrets need a lead, even to read
      tools: [http_request]
      input:
        - { field: url, matches: "^http://127\\\\.0\\\\.0\\\\.1:\\\\d+/api/secrets/" }
      approval: always
      approvers: [U0LEAD]
`,
    'test.yml',
  );
  const http = createHttpRequestTool(config.http!, { env: {} });
  // createToolApproval returns the function form; the AI SDK's type also allows a per-tool map.
  const gate = createToolApproval({ definitions: [http], context, policy: config.policy, bases: new Map<string, GateBasis>() }) as ApprovalGate;
  return { http, gate, policy: config.policy };
}

/**
 * What the bot does with a GET the model sends: the model is told why it was refused, or the gate
 * asks for approval, or the request runs at once (and the test server records the path it got).
 */
async function proposeGet(url: string, toolCallId: string) {
  const { http, gate } = setup();
  const parsed = http.inputSchema.safeParse({ method: 'GET', url });
  if (!parsed.success) return { refused: z.prettifyError(parsed.error) };
  const status = await gate({ toolCall: { toolCallId, toolName: 'http_request', input: parsed.data } });
  received.length = 0;
  if (status !== 'user-approval') await http.execute(parsed.data, { ...context, toolCallId, idempotencyKey: toolCallId });
  return { status, cardUrl: parsed.data.url, reached: [...received] };
}

const DOT_SEGMENTS = /"\." or "\.\." path segments/;
/** Each spelling of `${origin}/api/secrets/prod`, and what the model must be told or the gate must do. */
const spellings = (o: string): Array<[string, RegExp | 'user-approval']> => [
  [`${o}/api/public/../secrets/prod`, DOT_SEGMENTS],
  [`${o}/api/./secrets/prod`, DOT_SEGMENTS],
  [`${o}/api/%2E%2e/api/secrets/prod`, DOT_SEGMENTS],
  // Tomcat reads `..;x` as `..`; the URL parser does not.
  [`${o}/api/public/..;/secrets/prod`, DOT_SEGMENTS],
  [`${o}/api/secr\tets/prod`, /control character/],
  [`${o}/api/secr\nets/prod`, /control character/],
  [`${o}\\api\\secrets\\prod`, /backslash/],
  [`${o}/api//secrets/prod`, /empty path segment/],
  [`${o}/api/secrets;x/prod`, /";" in its path/],
  [`${o.replace('http://', 'HTTP://')}/api/secrets/prod`, 'user-approval'],
  [`${o.replace('http://', 'http:')}/api/secrets/prod`, 'user-approval'],
  // Left as written by the URL parser, but every common server decodes %73 to `s` before routing.
  [`${o}/api/%73ecrets/prod`, 'user-approval'],
  [`${o}/api/secrets/prod#readme`, 'user-approval'],
  // Decoding %37%33 to `73` completes `%73` out of the lone `%`: a second parse would send /api/secrets/prod.
  [`${o}/api/%%37%33ecrets/prod`, /"%" that is not followed by two hex digits; write "%" itself as %25/],
];

describe('http_request url rules', () => {
  it('the plain URL is caught by the rule', async () => {
    expect(await proposeGet(`${origin}/api/secrets/prod`, 'c-plain')).toEqual({ status: 'user-approval', cardUrl: `${origin}/api/secrets/prod`, reached: [] });
  });

  it('a URL the rule does not cover still runs at once, under its canonical spelling', async () => {
    expect(await proposeGet(`${origin.toUpperCase()}/api/%70ublic/x?q=%7e%c3%a9`, 'c-public')).toEqual({
      status: 'not-applicable',
      cardUrl: `${origin}/api/public/x?q=~%C3%A9`,
      reached: ['/api/public/x?q=~%C3%A9'],
    });
  });

  it.each(spellings('ORIGIN').map(([url], index) => [index, url]))('spelling %i (%j) is refused with a reason or needs the same approval', async (index) => {
    const [url, expected] = spellings(origin)[index as number]!;
    const outcome = await proposeGet(url, `c${index}`);
    if (expected === 'user-approval') expect(outcome).toEqual({ status: 'user-approval', cardUrl: `${origin}/api/secrets/prod`, reached: [] });
    else expect(outcome).toEqual({ refused: expect.stringMatching(expected) });
  });

  it('an approver who edits the URL into another spelling gets the canonical URL judged by the rule, or a form error', async () => {
    const { http, policy } = setup();
    const schemas = createToolSchemas({ definitions: [http] });
    for (const [url, expected] of spellings(origin)) {
      const validated = await schemas.validate('http_request', { method: 'GET', url });
      if (expected !== 'user-approval') {
        expect(validated, url).toEqual({ success: false, issues: [{ path: ['url'], message: expect.stringMatching(expected) }] });
        continue;
      }
      expect(validated, url).toEqual({ success: true, value: { method: 'GET', url: `${origin}/api/secrets/prod` } });
      const evaluation = await evaluateCallPolicy({ policy, definition: http, toolName: 'http_request', input: validated.success ? validated.value : undefined, context });
      expect({ needsApproval: evaluation.needsApproval, rule: evaluation.rule?.name }, url).toEqual({ needsApproval: true, rule: 'secrets need a lead, even to read' });
    }
  });

  it('execute refuses a stored input in a refused spelling and sends nothing', async () => {
    const { http } = setup();
    received.length = 0;
    await expect(http.execute({ method: 'GET', url: `${origin}/api/public/../secrets/prod` }, { ...context, toolCallId: 'c-stored', idempotencyKey: 'k' })).rejects.toThrow(DOT_SEGMENTS);
    expect(received).toEqual([]);
  });

  it('execute refuses a stored input not in its canonical spelling, rather than send a request nobody checked', async () => {
    const { http } = setup();
    received.length = 0;
    // What the gate and the approval saw for "%%37%33ecrets" before a lone "%" was refused: parsed again, it is /api/secrets/prod.
    await expect(http.execute({ method: 'GET', url: `${origin}/api/%73ecrets/prod` }, { ...context, toolCallId: 'c-stored-escape', idempotencyKey: 'k' })).rejects.toThrow(
      `Refused: ${origin}/api/%73ecrets/prod is not written as the URL that would be sent (${origin}/api/secrets/prod), so it is not the request that was checked. Nothing was sent.`,
    );
    expect(received).toEqual([]);
  });

  it('the canonical spelling is stable, so a re-validated approved input is unchanged', () => {
    for (const [url, expected] of spellings(origin)) {
      if (expected === 'user-approval') expect(canonicalUrl(canonicalUrl(url)), url).toBe(canonicalUrl(url));
    }
    expect(canonicalUrl('https://API.example.com:443/v1/%7Euser/%c3%a9?a=%2d#x')).toBe('https://api.example.com/v1/~user/%C3%A9?a=-');
  });
});
