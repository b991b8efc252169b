import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfigFile } from '../config/config-file.js';
import { createCommandTool } from './command/command-tool.js';
import { definitionFingerprintOf } from './definition-fingerprint.js';
import { createHttpRequestTool } from './http/http-request-tool.js';
import type { ToolDefinition } from './tool-definition.js';

const RESTART = {
  command: '[kubectl, rollout, restart, "deployment/{service}", -n, "{namespace}"]',
  parameters: '{ service: { type: string }, namespace: { type: string, enum: [staging, prod] } }',
  more: '',
};

/** restart_service as a release's config writes it, with some of it changed. */
function commandTool(changes: Partial<typeof RESTART> = {}, description = 'Restart a deployment') {
  const { command, parameters, more } = { ...RESTART, ...changes };
  const [tool] = parseConfigFile(`tools:\n  - name: restart_service\n    description: ${description}\n    command: ${command}\n    parameters: ${parameters}\n${more}`, 'countersign.yml').tools;
  return createCommandTool(tool!, { runCommand: async () => { throw new Error('not run here'); } });
}

function httpTool(headers: string, env: Record<string, string>) {
  const { http } = parseConfigFile(`http:\n  bases:\n    - url: https://api.example.com/v1/\n      headers: ${headers}\n`, 'countersign.yml');
  return createHttpRequestTool(http!, { env });
}

const fingerprint = (definition: ToolDefinition) => definitionFingerprintOf(definition);

describe('definitionFingerprintOf: what an approval is given for', () => {
  it('is the same for the same command tool built again (another process, the same config)', async () => {
    expect(await fingerprint(commandTool())).toBe(await fingerprint(commandTool()));
  });

  it('changes with what decides the argv and how it runs: the template, a parameter or its default, the directory, the timeout', async () => {
    const before = await fingerprint(commandTool());
    const changed = [
      commandTool({ command: '[kubectl, delete, "deployment/{service}", -n, "{namespace}"]' }),
      commandTool({ parameters: '{ service: { type: string }, namespace: { type: string, enum: [staging, prod], default: prod } }' }),
      commandTool({ parameters: '{ service: { type: string }, namespace: { type: string, enum: [staging, prod] }, force: { type: boolean, default: true } }' }),
      commandTool({ more: '    workingDirectory: /srv/other\n' }),
      commandTool({ more: '    timeoutSeconds: 600\n' }),
    ];
    for (const tool of changed) expect(await fingerprint(tool)).not.toBe(before);
  });

  it("does not change with the tool's description or output limit, which change nothing that runs", async () => {
    const before = await fingerprint(commandTool());
    expect(await fingerprint(commandTool({}, 'Restart a deployment (rolling)'))).toBe(before);
    expect(await fingerprint(commandTool({ more: '    outputLimit: 100\n' }))).toBe(before);
  });

  it('http_request: changes with a header template, not with the secret read into it', async () => {
    const before = await fingerprint(httpTool('{ Authorization: "Bearer ${API_TOKEN}" }', { API_TOKEN: 'one' }));
    expect(await fingerprint(httpTool('{ Authorization: "Bearer ${API_TOKEN}" }', { API_TOKEN: 'rotated' }))).toBe(before);
    expect(await fingerprint(httpTool('{ Authorization: "Bearer ${API_TOKEN}", X-Dry-Run: "false" }', { API_TOKEN: 'one' }))).not.toBe(before);
  });

  it('a TypeScript tool: its input schema, and what it declares itself', async () => {
    const tool = (max: number, declared?: string): ToolDefinition => ({
      name: 'scale_worker',
      description: 'Scale',
      inputSchema: z.object({ replicas: z.number().max(max) }),
      ...(declared === undefined ? {} : { definitionFingerprint: declared }),
      execute: async () => 'ok',
    });
    expect(await fingerprint(tool(50))).toBe(await fingerprint(tool(50)));
    expect(await fingerprint(tool(20))).not.toBe(await fingerprint(tool(50)));
    expect(await fingerprint(tool(50, 'v2'))).not.toBe(await fingerprint(tool(50, 'v1')));
  });
});
