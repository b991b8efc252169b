import { describe, expect, it } from 'vitest';
import { autoApprovedCall } from '../agent/auto-approved-call.test-support.js';
import { parseConfigFile } from '../config/config-file.js';
import type { RunCommandOptions } from './command/run-command.js';
import { commandNotRun } from './command/run-command.js';
import { createCommandTool } from './command/command-tool.js';
import { createHttpRequestTool } from './http/http-request-tool.js';
import { useMutableMcpServers } from './mcp/mutable-mcp-server.test-support.js';

/**
 * Command, HTTP and MCP tools check their input again in `execute` (an approved input may have been
 * edited, or stored by an older release), after the turn wrote the call's start marker, and refuse
 * one that does not fit before anything runs. Such a call did not run: it must be recorded as not
 * run, and one let through without a card must not be announced as one that "ran without a card".
 */
const startServer = useMutableMcpServers();

function expectNotRun(call: ReturnType<typeof autoApprovedCall>) {
  // The marker was written before the tool refused: its record must say the call did not start.
  expect(call.markers).toEqual(['c1']);
  expect(call.toldRan).toEqual([]);
  expect(call.executions).toEqual([expect.objectContaining({ toolCallId: 'c1', started: false, output: expect.stringMatching(/^Invalid input for /) })]);
  expect(call.failures).toEqual([expect.objectContaining({ type: 'tool_not_started' })]);
}

describe('an auto-approved call whose input its tool refuses at its start', () => {
  it('a command tool: recorded as not run, not told as "ran without a card"', async () => {
    const [toolConfig] = parseConfigFile(
      `
tools:
  - name: restart
    description: Restart
    command: ["restart", "{service}"]
    parameters:
      service: { type: string, description: Which service }
    approval: never
`,
      'countersign.yml',
    ).tools;
    const ran: RunCommandOptions[] = [];
    const runCommand = async (options: RunCommandOptions) => {
      ran.push(options);
      return commandNotRun({ error: 'the test runs nothing', durationMs: 0 });
    };
    const call = autoApprovedCall({ definitions: [createCommandTool(toolConfig!, { runCommand })], toolName: 'restart', input: { service: 42 } });

    await expect(call.execute()).rejects.toThrow(/Invalid input for restart/);
    expect(ran).toEqual([]);
    expectNotRun(call);
  });

  it('http_request: recorded as not run, not told as "ran without a card"', async () => {
    const http = parseConfigFile('http:\n  bases:\n    - url: https://api.example.com/api/\n', 't.yml').http!;
    const sent: string[] = [];
    const fetch = async (url: string | URL | Request) => {
      sent.push(String(url));
      return new Response('ok');
    };
    const call = autoApprovedCall({
      definitions: [createHttpRequestTool(http, { env: {}, fetch: fetch as typeof globalThis.fetch })],
      toolName: 'http_request',
      input: { method: 'GET', url: 'https://api.example.com/api/status', body: 'a GET has none' },
    });

    await expect(call.execute()).rejects.toThrow(/Invalid input for http_request/);
    expect(sent).toEqual([]);
    expectNotRun(call);
  });

  it('an MCP tool: recorded as not run, not told as "ran without a card"', { timeout: 30_000 }, async () => {
    const STATUS = { name: 'status', description: 'Status', inputSchema: { type: 'object', properties: { verbose: { type: 'boolean' } } } };
    const { handle, calls } = startServer({ tools: [STATUS], filterYaml: 'include: [status]', logLevel: 'warn' });
    await handle.start();
    const call = autoApprovedCall({ definitions: handle.tools(), toolName: 'db.status', input: { verbose: 'yes' } });

    await expect(call.execute()).rejects.toThrow(/Invalid input for db\.status/);
    expect(calls()).toEqual([]);
    expectNotRun(call);
  });
});
