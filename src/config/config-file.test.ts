import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { problemsOf } from './config-problems.test-support.js';
import { loadConfigFile, parseConfigFile } from './config-file.js';
import { DEFAULT_INSTRUCTIONS } from './default-instructions.js';


const fields = (yamlText: string) => problemsOf(yamlText).map((problem) => problem.field);

const RESTART = `
tools:
  - name: restart_service
    description: Restart a deployment
    command: ["kubectl", "rollout", "restart", "deployment/{service}", "-n", "{namespace}"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+", maxLength: 63 }
      namespace: { type: string, enum: [staging, prod], default: staging }
`;

describe('parseConfigFile', () => {
  it('applies defaults to an empty file', () => {
    expect(parseConfigFile('', 'countersign.yml')).toEqual({
      instructions: DEFAULT_INSTRUCTIONS,
      history: { ttlHours: 168, maxMessages: 200, maxBytes: 262_144 },
      agent: { maxSteps: 10 },
      tools: [],
      policy: {
        autoApprove: { global: false, channels: [] },
        defaults: {
          approvers: [{ kind: 'channel' }],
          required: 1,
          allowSelfApproval: true,
          expiryMs: 86_400_000,
          onExpiry: 'stop',
          autoApprove: 'allowed',
          grants: 'allowed',
        },
        rules: [],
      },
      schedules: [],
    });
  });

  it('tells the model not to retry declined calls by default', () => {
    expect(DEFAULT_INSTRUCTIONS).toMatch(/declined, do not retry/);
  });

  it('applies tool and parameter defaults, failing closed on approval', () => {
    const [tool] = parseConfigFile(RESTART, 'countersign.yml').tools;
    expect(tool).toEqual({
      name: 'restart_service',
      description: 'Restart a deployment',
      command: ['kubectl', 'rollout', 'restart', 'deployment/{service}', '-n', '{namespace}'],
      parameters: {
        service: { type: 'string', pattern: '[a-z0-9-]+', maxLength: 63, optional: false, allowLeadingDash: false },
        namespace: { type: 'string', enum: ['staging', 'prod'], default: 'staging', optional: false, allowLeadingDash: false },
      },
      approval: 'always',
      timeoutSeconds: 30,
      outputLimit: 4000,
    });
  });

  it('treats a section left empty (every entry commented out) as absent', () => {
    expect(parseConfigFile('history:\ntools:\n', 'countersign.yml').tools).toEqual([]);
  });

  const tool = (extra: string) => `
tools:
  - name: ok
    description: fine
    command: [uptime]
  - name: broken
    description: broken on purpose
    command: ["kubectl", "get", "pods", "-n", "{namespace}"]
    parameters:
      namespace: { type: string }
${extra}`;

  it.each([
    ['an unknown top-level key', 'tool: []', ['countersign.yml tool']],
    ['a wrong history type', 'history: { ttlHours: -1, maxMessages: 1.5 }', ['countersign.yml history.ttlHours', 'countersign.yml history.maxMessages']],
    ['an agent step limit of zero', 'agent: { maxSteps: 0 }', ['countersign.yml agent.maxSteps']],
    ['tools that are not a list', 'tools: { a: 1 }', ['countersign.yml tools']],
    ['a missing description', 'tools: [{ name: a, command: [ls] }]', ['countersign.yml tools[0].description']],
    ['an empty command', 'tools: [{ name: a, description: d, command: [] }]', ['countersign.yml tools[0].command']],
    ['a bad tool name', 'tools: [{ name: "1 tool", description: d, command: [ls] }]', ['countersign.yml tools[0].name']],
    ['an approval typo as a key', tool('    aproval: never'), ['countersign.yml tools[1].aproval']],
    ['an unsupported approval value', tool('    approval: sometimes'), ['countersign.yml tools[1].approval']],
    ['a timeout over an hour', tool('    timeoutSeconds: 3601'), ['countersign.yml tools[1].timeoutSeconds']],
    ['an empty enum', tool('      env: { type: string, enum: [] }'), ['countersign.yml tools[1].parameters.env.enum']],
    ['an unknown parameter type', tool('      count: { type: integer }'), ['countersign.yml tools[1].parameters.count.type']],
    ['an invalid parameter name', tool('      "bad-name": { type: string }'), ['countersign.yml tools[1].parameters["bad-name"]']],
    ['an invalid pattern', tool('      service: { type: string, pattern: "([" }'), ['countersign.yml tools[1].parameters.service.pattern']],
    ['a default outside the enum', tool('      env: { type: string, enum: [a, b], default: c }'), ['countersign.yml tools[1].parameters.env.default']],
    ['a default above the maximum', tool('      replicas: { type: number, maximum: 5, default: 9 }'), ['countersign.yml tools[1].parameters.replicas.default']],
    ['minimum above maximum', tool('      replicas: { type: number, minimum: 5, maximum: 1 }'), ['countersign.yml tools[1].parameters.replicas.maximum']],
    ['enum mixed with pattern', tool('      env: { type: string, enum: [a], pattern: "a" }'), ['countersign.yml tools[1].parameters.env.pattern']],
    ['a number option on a string', tool('      env: { type: string, minimum: 1 }'), ['countersign.yml tools[1].parameters.env.minimum']],
    ['a duplicate tool name', 'tools: [{ name: a, description: d, command: [ls] }, { name: a, description: d, command: [ls] }]', ['countersign.yml tools[1].name']],
  ])('names the field for %s', (_case, yamlText, expected) => {
    expect(fields(yamlText)).toEqual(expected);
  });

  it('suggests the intended key for a typo', () => {
    expect(problemsOf(tool('    aproval: never'))).toEqual([
      { field: 'countersign.yml tools[1].aproval', message: 'is not a known setting (did you mean approval?)' },
    ]);
  });

  it('reports placeholders that name no parameter, alongside other errors', () => {
    const problems = problemsOf(`
tools:
  - name: scale
    description: Scale a deployment
    command: ["kubectl", "scale", "deployment/{service}", "--replicas={replicas}", "-n", "{namespce}"]
    timeoutSeconds: -5
    parameters:
      service: { type: string }
      replicas: { type: number, integer: true }
`);
    expect(problems).toEqual([
      { field: 'countersign.yml tools[0].timeoutSeconds', message: expect.any(String) },
      { field: 'countersign.yml tools[0].command[5]', message: '{namespce} is not a declared parameter' },
    ]);
  });

  it('refuses a placeholder in the executable, stray braces, and optional values inside an element', () => {
    const problems = problemsOf(`
tools:
  - name: t
    description: d
    command: ["{binary}", "-o", "jsonpath={.items}", "--replicas={replicas}"]
    parameters:
      binary: { type: string }
      replicas: { type: number, optional: true }
`);
    expect(problems.map((problem) => `${problem.field}: ${problem.message}`)).toEqual([
      'countersign.yml tools[0].command[0]: the executable must be fixed text, not a {placeholder}',
      expect.stringMatching(/^countersign.yml tools\[0\].command\[2\]: "\{" at position 9 does not start a \{name\} placeholder/),
      'countersign.yml tools[0].command[3]: {replicas} is optional without a default, so it may only stand alone as a whole element',
    ]);
  });

  it('accepts escaped braces', () => {
    const yamlText = 'tools: [{ name: t, description: d, command: [kubectl, get, pods, "-o", "jsonpath={{.items}}"] }]';
    expect(parseConfigFile(yamlText, 'countersign.yml').tools[0]?.command[4]).toBe('jsonpath={{.items}}');
  });

  it('gives the line and column of a YAML syntax error', () => {
    expect(problemsOf('agent:\n  maxSteps: 3: 4\n')).toEqual([
      { field: 'countersign.yml:2:13', message: 'YAML syntax error: Nested mappings are not allowed in compact mappings' },
    ]);
    expect(problemsOf('history:\n  ttlHours: 1\n  ttlHours: 2\n')).toEqual([
      { field: 'countersign.yml:3:3', message: 'YAML syntax error: Map keys must be unique' },
    ]);
  });

  it('keeps a thread history at most a year: 1e300 hours would make every Redis save fail', () => {
    expect(problemsOf('history: { ttlHours: 1e300 }\n')).toEqual([{ field: 'countersign.yml history.ttlHours', message: 'must be at most 8760 (a year)' }]);
    expect(problemsOf('history: { ttlHours: 8761 }\n')).toEqual([{ field: 'countersign.yml history.ttlHours', message: 'must be at most 8760 (a year)' }]);
    expect(parseConfigFile('history: { ttlHours: 8760 }\n', 'countersign.yml').history.ttlHours).toBe(8760);
  });

  it('reports a document that is not a mapping', () => {
    expect(fields('- just\n- a list\n')).toEqual(['countersign.yml']);
  });
});

describe('loadConfigFile', () => {
  it('returns the built-in defaults without a path', async () => {
    expect((await loadConfigFile(undefined)).tools).toEqual([]);
  });

  it('reads a file and names it in problems', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'countersign-config-'));
    const path = join(directory, 'bot.yml');
    await writeFile(path, 'agent: { maxSteps: 3 }\n');
    expect((await loadConfigFile(path)).agent.maxSteps).toBe(3);

    await writeFile(path, 'agent: { maxStep: 3 }\n');
    await expect(loadConfigFile(path)).rejects.toThrow(`${path} agent.maxStep: is not a known setting (did you mean maxSteps?)`);
  });

  it('says so when the file is missing', async () => {
    await expect(loadConfigFile('/nonexistent/countersign.yml')).rejects.toThrow('/nonexistent/countersign.yml: file not found');
  });
});
