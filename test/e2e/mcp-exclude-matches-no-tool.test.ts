import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * An operator hides an MCP server's destructive tool with `exclude`, and misspells it. The server's
 * tools are known only once it lists them, so start-up cannot refuse it; before the fix the model
 * was offered `ops.delete_database`, the tool the operator meant to hide, and nothing said so. Now
 * none of the server's tools are offered, the thread is told as it is of a server that could not be
 * started, and `/healthz` names the warning. An `exclude` glob kept for tools the server may list
 * later (`drop_*`) and an unmatched `include` entry are only warnings there: those servers' tools are offered.
 */
const harness = useHarnesses();
const SERVER = join(import.meta.dirname, '../fixtures/mutable-mcp-server.mjs');
const DELETE = { name: 'delete_database', description: 'Drop a database', inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } };
const STATUS = { name: 'status', description: 'Status', inputSchema: { type: 'object', properties: {} } };

function serverYaml(name: string, filter: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-mcp-'));
  const toolsFile = join(dir, 'tools.json');
  writeFileSync(toolsFile, JSON.stringify([DELETE, STATUS]));
  return `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SERVER)}, ${JSON.stringify(toolsFile)}, ${JSON.stringify(join(dir, 'calls.jsonl'))}]\n    ${filter}\n`;
}

describe('an MCP server whose exclude names no tool it lists', () => {
  it('offers none of its tools, says so in the thread, and /healthz names it', { timeout: 30_000 }, async () => {
    const h = await harness({ extraYaml: `mcpServers:\n${serverYaml('ops', 'exclude: [delete_databse]')}${serverYaml('info', 'include: [stauts, status]')}${serverYaml('later', 'exclude: ["drop_*"]')}` });
    h.openai.enqueue({ text: 'Nothing to do.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'drop the staging database', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('MCP server ops')), { message: 'the notice', timeoutMs: 15_000 });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('Nothing to do.')), { message: 'the answer' });

    const offered = (h.openai.requests[0]!.body.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
    expect(offered.filter((name) => name.startsWith('ops__'))).toEqual([]);
    // The include with one unmatched glob still offers the matched tool.
    expect(offered).toContain('info__status');
    // An exclude glob that matches no tool yet withholds nothing.
    expect(offered.filter((name) => name.startsWith('later__')).sort()).toEqual(['later__delete_database', 'later__status']);
    expect(threadReplies(h, threadTs).filter((message) => message.text.includes('MCP server later'))).toEqual([]);
    expect(notice.text).toBe(
      ':electric_plug: MCP server ops: its exclude lists delete_databse, which matches none of the tools it lists, so none of its tools are offered ' +
        '(a misspelled exclude would offer the tool it was meant to hide). Correct mcpServers.ops.exclude.',
    );

    const health = await fetch(`${h.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { warnings?: string[] }).warnings).toEqual(expect.arrayContaining(['mcp-exclude-matches-no-tool', 'mcp-exclude-glob-matches-no-tool', 'mcp-include-matches-no-tool']));
    expect(h.warnings().join('\n')).toMatch(/"event":"mcp-exclude-matches-no-tool".*"mcpServer":"ops"|"mcpServer":"ops".*"event":"mcp-exclude-matches-no-tool"/);
  });
});
