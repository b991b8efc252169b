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

describe('countersign.example.yml schedules', () => {
  it('parses once the commented-out example is switched on', async () => {
    const text = await readFile(EXAMPLE_URL, 'utf8');
    const start = text.indexOf('\n# schedules:\n');
    const end = text.indexOf('\n\n', start);
    expect(start).toBeGreaterThan(0);
    const uncommented = text.slice(0, start + 1) + text.slice(start + 1, end).replace(/^# ?/gm, '') + text.slice(end);
    const { schedules, tools } = parseConfigFile(uncommented, 'countersign.example.yml');

    expect(schedules).toEqual([expect.objectContaining({ name: 'pod-heartbeat', cron: '*/15 * * * *', timezone: 'Europe/Paris', autoApprove: ['list_pods'] })]);
    expect(tools.map((tool) => tool.name)).toContain('list_pods');
  });
});

describe('countersign.example.yml policy', () => {
  it('parses once the commented-out example is switched on', async () => {
    const text = await readFile(EXAMPLE_URL, 'utf8');
    const start = text.indexOf('\n# policy:\n');
    expect(start).toBeGreaterThan(0);
    const uncommented = text.slice(0, start + 1) + text.slice(start + 1).replace(/^# ?/gm, '');
    const { policy } = parseConfigFile(uncommented, 'countersign.example.yml');

    expect(policy.rules.map((rule) => rule.name)).toEqual(['read-only', 'prod restarts', 'big scale-ups in ops', 'prod rollouts need SRE leads', 'host services']);
    expect(policy.autoApprove).toEqual({ global: false, channels: ['C0AUTOMATION'] });
    expect(policy.rules[1]).toMatchObject({ allowSelfApproval: false, expiryMs: 14_400_000, reminderMs: 1_800_000 });
  });
});
