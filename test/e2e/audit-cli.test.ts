import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AuditEventInput, StoredAuditEvent } from '../../src/audit/audit-event.js';
import { createRedisAuditLog } from '../../src/store/redis-audit-log.js';

/**
 * `npm run audit` is `node dist/audit/audit-cli.js`. The CLI is compiled with the build's own
 * settings, but into a directory of its own: other end-to-end tests rebuild dist/ concurrently,
 * and a half-written file there would make this test flaky.
 */
const repositoryRoot = join(import.meta.dirname, '../..');

let buildDirectory: string;
let cliPath: string;

async function buildCli(): Promise<void> {
  buildDirectory = mkdtempSync(join(tmpdir(), 'countersign-audit-cli-'));
  const outDir = join(buildDirectory, 'dist');
  writeFileSync(
    join(buildDirectory, 'tsconfig.json'),
    JSON.stringify({
      extends: join(repositoryRoot, 'tsconfig.build.json'),
      compilerOptions: { outDir, declaration: false, sourceMap: false },
      files: [join(repositoryRoot, 'src/audit/audit-cli.ts')],
      include: [],
    }),
  );
  // What the compiled files need from the repository: its dependencies and its "type": "module".
  symlinkSync(join(repositoryRoot, 'node_modules'), join(buildDirectory, 'node_modules'), 'dir');
  writeFileSync(join(buildDirectory, 'package.json'), JSON.stringify({ type: 'module' }));
  await promisify(execFile)(join(repositoryRoot, 'node_modules/.bin/tsc'), ['-p', join(buildDirectory, 'tsconfig.json')], { cwd: repositoryRoot });
  cliPath = join(outDir, 'audit/audit-cli.js');
}

interface CliResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

function runCli(args: string[], environment: Record<string, string>): Promise<CliResult> {
  const started = Date.now();
  // Only what an operator's shell would provide, so the CLI cannot lean on the test's environment.
  const child = spawn(process.execPath, [cliPath, ...args], { env: { PATH: process.env.PATH ?? '', ...environment }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr, elapsedMs: Date.now() - started })));
}

const events: AuditEventInput[] = [
  {
    type: 'approval-requested',
    teamId: 'T0TEAM001',
    stepId: 'step-1',
    approvalId: 'apv-1',
    toolName: 'restart_service',
    input: { service: 'api', apiKey: 'sk-SENTINEL-1' },
    requesterId: 'UALICE',
    channel: 'C0OPS',
    threadTs: '1714564803.000100',
  },
  {
    type: 'decision',
    teamId: 'T0TEAM001',
    stepId: 'step-1',
    approvalId: 'apv-1',
    toolName: 'restart_service',
    outcome: 'approved',
    userId: 'UBOB',
    originalInput: { service: 'api', apiKey: 'sk-SENTINEL-1' },
    editedInput: { service: 'web', apiKey: 'sk-SENTINEL-2' },
    reason: 'web is the one that is stuck',
  },
  {
    type: 'tool-executed',
    teamId: 'T0TEAM001',
    toolName: 'restart_service',
    toolCallId: 'call_1',
    channel: 'C0OPS',
    threadTs: '1714564803.000100',
    status: 'ok',
    exitCode: 0,
    durationMs: 830,
  },
];

describe('npm run audit (the compiled CLI as a child process)', () => {
  const keyPrefix = `test:${randomUUID()}:`;
  let environment: Record<string, string>;
  let stored: StoredAuditEvent[];

  beforeAll(async () => {
    environment = { REDIS_URL: inject('redisUrl'), COUNTERSIGN_KEY_PREFIX: keyPrefix };
    const log = createRedisAuditLog({ url: inject('redisUrl'), keyPrefix, logger: pino({ level: 'silent' }) });
    for (const event of events) {
      // One millisecond apart: events of different shards (a decision names no channel) in the same
      // millisecond have no defined order, and the table's order is what is checked.
      await log.append(event);
      const appended = Date.now();
      while (Date.now() <= appended) await new Promise((resolve) => setImmediate(resolve));
    }
    stored = await log.read({ sinceMs: 0 });
    await log.close();
    await buildCli();
  }, 60_000);
  afterAll(() => {
    if (buildDirectory) rmSync(buildDirectory, { recursive: true, force: true });
  });

  it('prints the last hour as a table a person can read, secrets hidden', async () => {
    const result = await runCli(['--since', '1h'], environment);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^TIME \(UTC\)\s+AGE\s+TYPE\s+TOOL\s+WHO\s+RESULT\s+DETAILS$/);
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d+s\s+approval-requested\s+restart_service\s+UALICE\s+requested\s+input \{"service":"api","apiKey":"\[redacted\]"\}/);
    expect(lines[2]).toMatch(/decision\s+restart_service\s+UBOB\s+approved\s+reason "web is the one that is stuck" · edited to \{"service":"web","apiKey":"\[redacted\]"\} from/);
    expect(lines[3]).toMatch(/tool-executed\s+restart_service\s+-\s+ok\s+exit 0 · took 830ms · in C0OPS\/1714564803.000100$/);
    expect(result.stdout).toMatch(/\n3 events from .* UTC\.\n$/);
    expect(result.stdout).not.toContain('SENTINEL');
  });

  it('prints JSON lines for a SIEM with --json', async () => {
    const result = await runCli(['--since', '1h', '--json'], environment);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(stored);
    expect(stored.map((event) => event.type)).toEqual(['approval-requested', 'decision', 'tool-executed']);
    expect(result.stdout).not.toContain('SENTINEL');
  });

  it('exits 1 and says what it expected when --since is not a time', async () => {
    const result = await runCli(['--since', 'yesterday'], environment);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--since must be a duration such as 30m, 24h or 7d, or an ISO time');
    expect(result.stderr).toContain('Usage: npm run audit');
  });

  it('exits 1 within seconds when Redis is unreachable, instead of hanging', async () => {
    const result = await runCli(['--since', '1h'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/could not read the audit trail from Redis: .*ECONNREFUSED/);
    expect(result.elapsedMs).toBeLessThan(8_000);
  });

  it('exits 1 and explains that auditing needs Redis when REDIS_URL is not set', async () => {
    const result = await runCli(['--since', '1h'], {});
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('REDIS_URL is not set');
  });
});
