import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createCommandTool } from '../../tools/command/command-tool.js';
import { createToolSchemas } from '../../tools/tool-schemas.js';
import { buildSchemaForm, parseSchemaForm } from './schema-form.js';
import { inputBlockAt, stateFromInput } from './view-state.test-support.js';

const stopProcess = `
tools:
  - name: stop_process
    description: Stop one process
    command: ["kill", "-TERM", "{pid}"]
    parameters:
      pid: { type: number, integer: true, description: Process id }
`;

describe('a command number that starts an argument, in the Edit form', () => {
  it('shows "must not be negative" on its field: its schema says minimum 0', async () => {
    const [toolConfig] = parseConfigFile(stopProcess, 'countersign.yml').tools;
    const tool = createCommandTool(toolConfig!, { runCommand: async () => { throw new Error('not run in this test'); } });
    const schema = await createToolSchemas({ definitions: [tool] }).jsonSchema('stop_process');
    expect(schema?.properties?.pid).toMatchObject({ minimum: 0 });
    const form = buildSchemaForm({ schema: schema!, initialValue: { pid: 4242 } });
    const parsed = parseSchemaForm({ form, stateValues: stateFromInput(form, { pid: -1 }) });
    expect(parsed).toEqual({ ok: false, errors: { [inputBlockAt(form, 'pid').block_id!]: 'Must be at least 0' } });
  });
});
