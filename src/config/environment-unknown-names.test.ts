import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { ENVIRONMENT_VARIABLES, parseEnvironment } from './environment.js';
import { findUnknownVariables } from './unknown-environment-variables.js';

/**
 * Reviewer's test. countersign.yml refuses an unknown key "instead of silently changing" a setting,
 * but the environment ignores any COUNTERSIGN_* name it does not know. README: "set 1 for a
 * managed primary with automatic failover behind a redis:// URL"; an operator who writes
 * COUNTERSIGN_REDIS_WAIT_REPLICA=1 (no S) gets the default, 0, with no word: calls start before any
 * replica has their executing marker, which is what keeps a call from running twice after a failover.
 * Likewise COUNTERSIGN_KEY_PREFIX, which `npm run audit` honours, is ignored by the bot.
 */
const noFile = { fileExists: () => false };
const HTTP = {
  SLACK_BOT_TOKEN: 'xoxb-secret-bot-token',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  OPENAI_API_KEY: 'sk-secret-openai-key',
  REDIS_URL: 'redis://redis.internal:6379',
};

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    const parsed = parseEnvironment(env, noFile);
    // What the process runs with: the replica wait the operator asked for is not set.
    expect(parsed.redisWaitReplicas).toBeUndefined();
    return [];
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems.map((problem) => problem.field);
    throw error;
  }
}

describe('an unknown COUNTERSIGN_* variable', () => {
  it('is reported by name (a misspelled COUNTERSIGN_REDIS_WAIT_REPLICAS)', () => {
    expect(problemsOf({ ...HTTP, COUNTERSIGN_REDIS_WAIT_REPLICA: '1' })).toContain('COUNTERSIGN_REDIS_WAIT_REPLICA');
  });
});

function problems(env: Record<string, string | undefined>): string[] {
  try {
    parseEnvironment(env, noFile);
    return [];
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems.map((problem) => `${problem.field}: ${problem.message}`);
    throw error;
  }
}

describe('COUNTERSIGN_* names countersign does not read', () => {
  it('refuses a near-miss of a known name, naming the one meant, after the other problems', () => {
    expect(problems({ ...HTTP, COUNTERSIGN_ROLE: 'boss', COUNTERSIGN_REDIS_WAIT_REPLICA: '1', Countersign_Role: 'worker' })).toEqual([
      'COUNTERSIGN_ROLE: must be one of all, receiver, worker',
      'COUNTERSIGN_REDIS_WAIT_REPLICA: is not a countersign setting; did you mean COUNTERSIGN_REDIS_WAIT_REPLICAS? Rename it (or unset it): as written it is ignored',
      'Countersign_Role: is not a countersign setting; did you mean COUNTERSIGN_ROLE? Rename it (or unset it): as written it is ignored',
    ]);
  });

  it('accepts the names other entry points read (npm run audit, the tests\' fault points and screenshots)', () => {
    const parsed = parseEnvironment({ ...HTTP, COUNTERSIGN_KEY_PREFIX: 'countersign-sandbox:', COUNTERSIGN_CRASH_AT: 'after-claim', COUNTERSIGN_STALL_AT: 'x', COUNTERSIGN_SCREENSHOTS: 'docs' }, noFile);
    expect(parsed.ignoredVariables).toBeUndefined();
  });

  it('lets a name far from every known one through, to be logged: a Kubernetes Service named countersign sets some', () => {
    const parsed = parseEnvironment(
      { ...HTTP, COUNTERSIGN_SERVICE_HOST: '10.0.0.7', COUNTERSIGN_PORT: 'tcp://10.0.0.7:3000', COUNTERSIGN_PORT_3000_TCP_ADDR: '10.0.0.7', COUNTERSIGN_TYPO_BLANK: ' ' },
      noFile,
    );
    expect(parsed.ignoredVariables).toEqual(['COUNTERSIGN_PORT', 'COUNTERSIGN_PORT_3000_TCP_ADDR', 'COUNTERSIGN_SERVICE_HOST']);
    expect(parseEnvironment(HTTP, noFile).ignoredVariables).toBeUndefined();
  });

  it('knows every COUNTERSIGN_* variable the repository reads', () => {
    // Names in the repository that are no variable of countersign's: a constant, a variable a test
    // passes to a command tool, a family written with a trailing _ in prose.
    const notVariables = new Set(['COUNTERSIGN_ACTOR', 'COUNTERSIGN_VISIBLE', 'COUNTERSIGN_REDIS_WAIT_']);
    const root = resolve(import.meta.dirname, '../..');
    const files = ['src', 'test', 'bench', '.ci', 'docs'].flatMap((directory) => filesUnder(join(root, directory))).concat(['Dockerfile', 'README.md', 'countersign.example.yml'].map((file) => join(root, file)));
    const named = new Set(
      files
        .filter((file) => !NAMING_UNKNOWN_VARIABLES.some((name) => file.endsWith(name)) && existsSync(file))
        .flatMap((file) => readFileSync(file, 'utf8').match(/\bCOUNTERSIGN_[A-Z0-9_]+/g) ?? []),
    );
    expect(named.size).toBeGreaterThan(15);
    const refusedOrIgnored = [...named].filter((name) => {
      if (notVariables.has(name)) return false;
      const found = findUnknownVariables({ [name]: 'x' }, ENVIRONMENT_VARIABLES);
      return found.problems.length > 0 || found.ignored.length > 0;
    });
    expect(refusedOrIgnored).toEqual([]);
  });
});

/** Files that name variables countersign does not read, as examples. */
const NAMING_UNKNOWN_VARIABLES = ['environment-unknown-names.test.ts', 'unknown-environment-variables.ts', 'ignored-environment-variables.test.ts'];

function filesUnder(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist') return [];
    const path = join(directory, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}
