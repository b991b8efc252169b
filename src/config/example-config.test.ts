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
