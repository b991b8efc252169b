import { describe, expect, it } from 'vitest';
import { autoApprovedCall } from '../../agent/auto-approved-call.test-support.js';
import { parseConfigFile } from '../../config/config-file.js';
import { createHttpRequestTool } from './http-request-tool.js';

/**
 * http_request refuses some calls in `execute`, after the turn wrote the call's start marker and
 * before the request leaves ("Nothing was sent."). Such a call did not run: it must be recorded as
 * not run, and one let through without a card must not be announced as one that "ran without a card".
 */
const ORIGIN = 'https://api.example.com';

function httpRequestTool(env: Record<string, string>) {
  const http = parseConfigFile(
    `
http:
  bases:
    - url: ${ORIGIN}/api/
      headers:
        X-Api-Credentials: "\${API_USER}:\${API_PASSWORD}"
`,
    't.yml',
  ).http!;
  const sent: string[] = [];
  const fetch = async (url: string | URL | Request) => {
    sent.push(String(url));
    return new Response('ok', { status: 200, headers: { 'content-type': 'text/plain' } });
  };
  return { tool: createHttpRequestTool(http, { env, fetch: fetch as typeof globalThis.fetch }), sent };
}

describe.each([
  {
    refusal: 'a stored URL not in its canonical spelling',
    env: { API_USER: 'ops-bot', API_PASSWORD: 'pw' },
    input: { method: 'GET', url: `${ORIGIN}/api/%73ecrets/prod` },
    message: /is not written as the URL that would be sent .*Nothing was sent/,
  },
  {
    refusal: 'a configured header whose value is not a valid header value',
    // Read from a file with its trailing newline, in the middle of the value.
    env: { API_USER: 'ops-bot\n', API_PASSWORD: 'pw' },
    input: { method: 'GET', url: `${ORIGIN}/api/status` },
    message: /the header X-Api-Credentials configured for .* is not a valid header value.*Nothing was sent/,
  },
  {
    refusal: "a header value of the call's own that is not a valid header value",
    env: { API_USER: 'ops-bot', API_PASSWORD: 'pw' },
    input: { method: 'GET', url: `${ORIGIN}/api/status`, headers: { 'X-Trace': 'a\nb' } },
    message: /header/i,
  },
])('an auto-approved http_request refused before it is sent: $refusal', ({ env, input, message }) => {
  it('is recorded as not run and not told as "ran without a card"', async () => {
    const { tool, sent } = httpRequestTool(env);
    const call = autoApprovedCall({ definitions: [tool], toolName: 'http_request', input });

    await expect(call.execute()).rejects.toThrow(message);
    expect(sent).toEqual([]);
    // The marker was written before the tool refused: its record must say the call did not start.
    expect(call.markers).toEqual(['c1']);
    expect(call.toldRan).toEqual([]);
    expect(call.executions).toEqual([expect.objectContaining({ toolCallId: 'c1', started: false })]);
    expect(call.failures).toEqual([expect.objectContaining({ type: 'tool_not_started' })]);
  });
});
