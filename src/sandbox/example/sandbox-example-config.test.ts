import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCallPolicy } from '../../approvals/evaluate-call-policy.js';
import { authorizeApprover } from '../../approvals/policy/authorize-approver.js';
import { quorumStatus } from '../../approvals/policy/quorum-status.js';
import { loadConfigFile } from '../../config/config-file.js';
import type { CountersignConfig } from '../../config/config-schema.js';
import { createCommandTool } from '../../tools/command/command-tool.js';
import { SANDBOX_ONCALL_GROUP, SANDBOX_USERS } from '../sandbox-workspace.js';
import { anchorCommandTools, loadSandboxExampleConfig, sandboxExampleConfigPath } from './sandbox-example-config.js';

const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
const CAROL = 'U0CAROL';
const DAVE = 'U0DAVE';
const context = { requesterId: ALICE, teamId: 'T0SANDBOX', channel: 'C0OPS', threadTs: '1.1' };
const groupMembers = new Map([[SANDBOX_ONCALL_GROUP, new Set([BOB, CAROL])]]);

let config: CountersignConfig;
beforeAll(async () => {
  config = await loadSandboxExampleConfig();
});

const toolNamed = (name: string) => createCommandTool(config.tools.find((tool) => tool.name === name)!);
const run = (name: string, input: object) => toolNamed(name).execute(input as never, { ...context, toolCallId: 'call-1', idempotencyKey: 'key-1' });

describe('the sandbox example config', () => {
  it('loads with the real loader, as the file it is and anchored for any working directory', async () => {
    const plain = await loadConfigFile(sandboxExampleConfigPath());

    expect(plain.tools.map((tool) => tool.name)).toEqual(['get_pods', 'restart_service', 'scale_deployment', 'deploy_version']);
    for (const tool of config.tools) {
      expect(tool.command[0]).toBe(process.execPath);
      expect(isAbsolute(tool.workingDirectory!)).toBe(true);
      expect(existsSync(`${tool.workingDirectory}/${tool.command[1]}`)).toBe(true);
    }
  });

  it('names only the sandbox workspace people as approvers', () => {
    const sandboxIds = new Set(SANDBOX_USERS.map((user) => user.id));
    const named = [config.policy.defaults, ...config.policy.rules].flatMap((settings) => settings.approvers.flatMap((approver) => (approver.kind === 'user' ? [approver.userId] : [])));
    expect(new Set(named)).toEqual(new Set([BOB, CAROL]));
    for (const userId of named) expect(sandboxIds).toContain(userId);
  });
});

describe('the sandbox example tools', () => {
  it('get_pods prints a simulated pod list', async () => {
    const output = await run('get_pods', { namespace: 'staging' });
    expect(output).toMatchObject({ exitCode: 0, stderr: '' });
    expect(output.stdout).toContain('would run: kubectl --context eu-west-1 get pods -n staging');
    expect(output.stdout).toMatch(/^worker-[a-z0-9]{10}-[a-z0-9]{5} +1\/1 +Running/m);
  });

  it('restart_service says what it would run and rolls out', async () => {
    const output = await run('restart_service', { service: 'worker', namespace: 'staging' });
    expect(output).toMatchObject({ exitCode: 0, stderr: '' });
    expect(output.stdout).toContain('would run: kubectl --context eu-west-1 rollout restart deployment/worker -n staging');
    expect(output.stdout.trim().split('\n').at(-1)).toBe('deployment "worker" successfully rolled out');
  });

  it('scale_deployment says what it would run', async () => {
    const output = await run('scale_deployment', { deployment: 'api', replicas: 5, namespace: 'prod', region: 'us-east-1' });
    expect(output).toMatchObject({ exitCode: 0, stderr: '' });
    expect(output.stdout).toContain('would run: kubectl --context us-east-1 scale deployment/api --replicas=5 -n prod');
    expect(output.stdout).toContain('deployment.apps/api scaled (3 → 5 replicas)');
  });

  it('deploy_version says what it would run and rolls out', async () => {
    const output = await run('deploy_version', { service: 'api', version: '1.5.0' });
    expect(output).toMatchObject({ exitCode: 0, stderr: '' });
    expect(output.stdout).toContain('would run: kubectl --context eu-west-1 set image deployment/api api=registry.example.com/api:1.5.0 -n staging');
    expect(output.stdout).toContain('deployment "api" successfully rolled out');
  });

  it('fails like kubectl for a deployment the simulated cluster does not have', async () => {
    const output = await run('restart_service', { service: 'billing', namespace: 'prod' });
    expect(output.exitCode).toBe(1);
    expect(output.stderr).toContain('Error from server (NotFound): deployments.apps "billing" not found in namespace "prod"');
  });

  it('refuses a service name that could smuggle in another argument', async () => {
    expect(toolNamed('restart_service').inputSchema.safeParse({ service: 'worker; rm -rf /' }).success).toBe(false);
  });
});

describe('the sandbox example policy', () => {
  const evaluate = (toolName: string, input: object) => evaluateCallPolicy({ policy: config.policy, definition: toolNamed(toolName), toolName, input, context });
  const authorize = (evaluation: Awaited<ReturnType<typeof evaluate>>, userId: string, approvedBy: string[] = []) =>
    authorizeApprover({ evaluation, userId, requesterId: ALICE, groupMembers, approvedBy });

  it('runs get_pods without approval', async () => {
    expect(await evaluate('get_pods', { namespace: 'prod' })).toMatchObject({ needsApproval: false, rule: { name: 'read-only' } });
  });

  it('lets one on-call approver countersign a staging change, with grants allowed', async () => {
    const evaluation = await evaluate('restart_service', { service: 'worker', namespace: 'staging', region: 'eu-west-1' });
    expect(evaluation).toMatchObject({ needsApproval: true, rule: { name: 'staging changes' }, required: 1, grants: 'allowed', expiryMs: 600_000, allowSelfApproval: false });
    expect(authorize(evaluation, BOB)).toEqual({ allowed: true });
    expect(authorize(evaluation, CAROL)).toEqual({ allowed: true });
    expect(quorumStatus({ evaluation, approvedBy: [CAROL], requesterId: ALICE, groupMembers }).reached).toBe(true);
  });

  it('needs bob and carol both for prod', async () => {
    const evaluation = await evaluate('scale_deployment', { deployment: 'api', replicas: 5, namespace: 'prod', region: 'eu-west-1' });
    expect(evaluation).toMatchObject({ needsApproval: true, rule: { name: 'prod two-person rule' }, required: 2, grants: 'forbidden', autoApprove: 'forbidden' });
    expect(quorumStatus({ evaluation, approvedBy: [BOB], requesterId: ALICE, groupMembers })).toEqual({ approvals: 1, remaining: 1, reached: false });
    expect(authorize(evaluation, BOB, [BOB])).toMatchObject({ allowed: false, code: 'already-approved' });
    expect(authorize(evaluation, CAROL, [BOB])).toEqual({ allowed: true });
    expect(quorumStatus({ evaluation, approvedBy: [BOB, CAROL], requesterId: ALICE, groupMembers }).reached).toBe(true);
  });

  it('refuses dave, and alice approving her own request', async () => {
    for (const input of [{ service: 'worker', namespace: 'staging' }, { service: 'worker', namespace: 'prod' }]) {
      const evaluation = await evaluate('restart_service', input);
      expect(authorize(evaluation, DAVE)).toMatchObject({ allowed: false, code: 'not-eligible' });
      expect(authorize(evaluation, ALICE)).toMatchObject({ allowed: false, code: 'self-approval' });
    }
  });

  it('lets a staging deploy expire after 2 minutes and tells the model', async () => {
    expect(await evaluate('deploy_version', { service: 'api', version: '1.5.0', namespace: 'staging' })).toMatchObject({
      rule: { name: 'deploys expire fast' },
      expiryMs: 120_000,
      reminderMs: 60_000,
      onExpiry: 'continue',
      required: 1,
    });
    expect(await evaluate('deploy_version', { service: 'api', version: '1.5.0', namespace: 'prod' })).toMatchObject({ rule: { name: 'prod two-person rule' }, required: 2 });
  });
});

describe('anchorCommandTools', () => {
  it('resolves relative working directories against the root and leaves other tools alone', () => {
    const { workingDirectory: _ignored, ...bare } = config.tools[0]!;
    const anchored = anchorCommandTools({
      config: {
        ...config,
        tools: [
          { ...bare, command: ['node', 'x.mjs'], workingDirectory: 'scripts' },
          { ...bare, command: ['kubectl', 'get', 'pods'], workingDirectory: '/srv' },
          { ...bare, command: ['uptime'] },
        ],
      },
      root: '/repo',
      node: '/opt/node22/bin/node',
    });
    expect(anchored.tools.map((each) => [each.command, each.workingDirectory])).toEqual([
      [['/opt/node22/bin/node', 'x.mjs'], '/repo/scripts'],
      [['kubectl', 'get', 'pods'], '/srv'],
      [['uptime'], undefined],
    ]);
  });
});
