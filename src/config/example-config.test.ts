import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createCommandTool } from '../tools/command/command-tool.js';
import { parseConfigFile } from './config-file.js';

const EXAMPLE_URL = new URL('../../countersign.example.yml', import.meta.url);

describe('countersign.example.yml', () => {
  it('parses without errors and every tool builds', async () => {
    const config = parseConfigFile(await readFile(EXAMPLE_URL, 'utf8'), 'countersign.example.yml');

    expect(config.tools.length).toBeGreaterThan(4);
    for (const tool of config.tools) expect(() => createCommandTool(tool)).not.toThrow();
  });

  it('asks for approval on mutating tools and not on read-only ones', async () => {
    const config = parseConfigFile(await readFile(EXAMPLE_URL, 'utf8'), 'countersign.example.yml');
    const approvalOf = (name: string) => config.tools.find((tool) => tool.name === name)?.approval;

    expect(approvalOf('list_pods')).toBe('never');
    expect(approvalOf('restart_service')).toBe('always');
    expect(approvalOf('scale_deployment')).toBe('always');
    expect(approvalOf('restart_unit')).toBe('always');
  });
});

describe('countersign.example.yml tools', () => {
  it('render the commands an operator would expect', async () => {
    const config = parseConfigFile(await readFile(EXAMPLE_URL, 'utf8'), 'countersign.example.yml');
    const argvs: string[][] = [];
    const runCommand = async ({ argv }: { argv: string[] }) => {
      argvs.push(argv);
      return { exitCode: 0, signal: null, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 1, timedOut: false };
    };
    const tool = (name: string) => createCommandTool(config.tools.find((candidate) => candidate.name === name)!, { runCommand });
    const context = { requesterId: 'U1', teamId: 'T1', channel: 'C1', threadTs: '1.2', toolCallId: 'c', idempotencyKey: 'k' };

    await tool('scale_deployment').execute({ service: 'checkout-api', replicas: 3 }, context);
    await tool('list_pods').execute({}, context);

    expect(argvs).toEqual([
      ['kubectl', 'scale', 'deployment/checkout-api', '--replicas=3', '-n', 'staging'],
      ['kubectl', 'get', 'pods', '-n', 'staging', '-o', 'wide'],
    ]);
    expect(tool('restart_unit').inputSchema.safeParse({ unit: 'nginx.service; reboot' }).success).toBe(false);
    expect(tool('restart_unit').inputSchema.safeParse({ unit: 'nginx.service' }).success).toBe(true);
  });
});
