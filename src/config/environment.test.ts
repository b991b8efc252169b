import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { describeEnvironment, parseEnvironment } from './environment.js';

const noFile = { fileExists: () => false };
const HTTP = {
  SLACK_BOT_TOKEN: 'xoxb-secret-bot-token',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  OPENAI_API_KEY: 'sk-secret-openai-key',
};

function problemsOf(env: Record<string, string | undefined>) {
  try {
    parseEnvironment(env, noFile);
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseEnvironment', () => {
  it('applies defaults for a minimal HTTP-mode environment', () => {
    expect(parseEnvironment(HTTP, noFile)).toEqual({
      slack: { botToken: HTTP.SLACK_BOT_TOKEN, signingSecret: HTTP.SLACK_SIGNING_SECRET, socketMode: false, port: 3000, streaming: 'update' },
      metrics: {},
      openai: { apiKey: HTTP.OPENAI_API_KEY, model: 'gpt-5-mini', api: 'responses' },
      logLevel: 'info',
      role: 'all',
      slackFront: 'thread',
      tuning: {},
    });
  });

  it('reads COUNTERSIGN_TURN_THREAD_NICE as a nice value from 0 to 19, naming it otherwise', () => {
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_TURN_THREAD_NICE: '0' }, noFile).tuning).toEqual({ turnThreadNice: 0 });
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_TURN_THREAD_NICE: '19' }, noFile).tuning).toEqual({ turnThreadNice: 19 });
    for (const value of ['20', '-1', '2.5', 'low']) {
      expect(problemsOf({ ...HTTP, COUNTERSIGN_TURN_THREAD_NICE: value }).problems).toEqual([
        { field: 'COUNTERSIGN_TURN_THREAD_NICE', message: "must be a whole number from 0 (the front's priority) to 19 (the lowest)" },
      ]);
    }
  });

  it('reads COUNTERSIGN_COMMAND_SPAWNER as on or off, naming it when it is neither', () => {
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_COMMAND_SPAWNER: 'off' }, noFile).tuning).toEqual({ commandSpawner: false });
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_COMMAND_SPAWNER: 'ON' }, noFile).tuning).toEqual({ commandSpawner: true });
    expect(problemsOf({ ...HTTP, COUNTERSIGN_COMMAND_SPAWNER: 'no' }).problems).toEqual([{ field: 'COUNTERSIGN_COMMAND_SPAWNER', message: 'must be one of on, off' }]);
  });

  it('reads the tuning knobs with the rest, naming a bad one', () => {
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_LOCK_TTL_MS: '5000', COUNTERSIGN_MAX_CONCURRENT_TURNS: '64', COUNTERSIGN_MAX_RUNNING_COMMANDS: '4' }, noFile).tuning).toEqual({
      lockTtlMs: 5000,
      maxConcurrentTurns: 64,
      maxRunningCommands: 4,
    });
    expect(problemsOf({ ...HTTP, COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS: 'fast', COUNTERSIGN_SWEEP_INTERVAL_MS: '5', COUNTERSIGN_MAX_RUNNING_COMMANDS: '0' }).problems).toEqual([
      { field: 'COUNTERSIGN_SWEEP_INTERVAL_MS', message: 'must be a whole number of milliseconds from 10 to 86400000 (a day)' },
      { field: 'COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS', message: 'must be a whole number of milliseconds from 10 to 600000 (ten minutes)' },
      { field: 'COUNTERSIGN_MAX_RUNNING_COMMANDS', message: 'must be a whole number of commands from 1 to 10000' },
    ]);
  });

  it.each(['0x10', '1e3', '1e300', '0b11', '1.0'])('refuses COUNTERSIGN_MAX_CONCURRENT_TURNS=%s like the bounded knobs do', (value) => {
    expect(problemsOf({ ...HTTP, COUNTERSIGN_MAX_CONCURRENT_TURNS: value }).problems.map((problem) => problem.field)).toContain('COUNTERSIGN_MAX_CONCURRENT_TURNS');
  });

  it('refuses a timer knob past a day (Node fires a timer past 2^31-1 ms after 1 ms), naming the variable and the range', () => {
    // 3e9 ms (about 35 days) is a "practically never" an operator may write: accepted, the sweeper swept every millisecond.
    expect(problemsOf({ ...HTTP, COUNTERSIGN_SWEEP_INTERVAL_MS: '3000000000', COUNTERSIGN_LOCK_TTL_MS: '9000000000' }).problems).toEqual([
      { field: 'COUNTERSIGN_SWEEP_INTERVAL_MS', message: 'must be a whole number of milliseconds from 10 to 86400000 (a day)' },
      { field: 'COUNTERSIGN_LOCK_TTL_MS', message: 'must be a whole number of milliseconds from 10 to 86400000 (a day)' },
    ]);
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_SWEEP_INTERVAL_MS: '86400000', COUNTERSIGN_LOCK_TTL_MS: '86400000' }, noFile).tuning).toEqual({
      sweepIntervalMs: 86_400_000,
      lockTtlMs: 86_400_000,
    });
  });

  it('lists problems of single variables and rules across variables together, in one pass', () => {
    const error = problemsOf({ SLACK_BOT_USER_ID: 'U1', OPENAI_API_KEY: 'k', COUNTERSIGN_ROLE: 'worker', COUNTERSIGN_LOCK_TTL_MS: '-5' });
    expect(error.problems).toEqual([
      { field: 'SLACK_BOT_TOKEN', message: 'is required (the bot token, xoxb-...)' },
      { field: 'SLACK_SIGNING_SECRET', message: 'is required in HTTP mode (set SLACK_APP_TOKEN to use Socket Mode instead)' },
      { field: 'SLACK_BOT_ID', message: 'must be set together with SLACK_BOT_USER_ID' },
      { field: 'COUNTERSIGN_ROLE', message: 'worker needs REDIS_URL: receivers hand turns to workers through Redis' },
      { field: 'COUNTERSIGN_LOCK_TTL_MS', message: 'must be a whole number of milliseconds from 10 to 86400000 (a day)' },
    ]);
    expect(error.message).not.toContain('-5');
  });

  it('reads the process role; receivers and workers need Redis to meet, and a typo is named', () => {
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_ROLE: 'Receiver', REDIS_URL: 'redis://localhost:6379' }, noFile).role).toBe('receiver');
    expect(problemsOf({ ...HTTP, COUNTERSIGN_ROLE: 'worker' }).problems).toEqual([
      { field: 'COUNTERSIGN_ROLE', message: 'worker needs REDIS_URL: receivers hand turns to workers through Redis' },
    ]);
    expect(problemsOf({ ...HTTP, COUNTERSIGN_ROLE: 'recevier' }).problems.map((problem) => problem.field)).toEqual(['COUNTERSIGN_ROLE']);
  });

  it('serves Slack from a front thread in HTTP mode unless told otherwise; the front needs HTTP mode and a role that serves Slack', () => {
    expect(parseEnvironment(HTTP, noFile).slackFront).toBe('thread');
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_SLACK_FRONT: 'Inline' }, noFile).slackFront).toBe('inline');
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_ROLE: 'worker', REDIS_URL: 'redis://localhost:6379' }, noFile).slackFront).toBe('inline');
    expect(parseEnvironment({ ...HTTP, SLACK_APP_TOKEN: 'xapp-1' }, noFile).slackFront).toBe('inline');
    expect(parseEnvironment({ ...HTTP, COUNTERSIGN_SLACK_FRONT: 'thread', COUNTERSIGN_ROLE: 'receiver', REDIS_URL: 'redis://localhost:6379' }, noFile).slackFront).toBe('thread');
    expect(problemsOf({ ...HTTP, COUNTERSIGN_SLACK_FRONT: 'threads' }).problems.map((problem) => problem.field)).toEqual(['COUNTERSIGN_SLACK_FRONT']);
    expect(problemsOf({ ...HTTP, COUNTERSIGN_SLACK_FRONT: 'thread', COUNTERSIGN_ROLE: 'worker', REDIS_URL: 'redis://localhost:6379' }).problems).toEqual([
      { field: 'COUNTERSIGN_SLACK_FRONT', message: 'thread serves Slack requests, which a worker (COUNTERSIGN_ROLE=worker) does not' },
    ]);
  });

  it('refuses credentials in OPENAI_BASE_URL, naming the variable and never the password', () => {
    for (const value of ['http://countersign:Pr0xyPassw0rd@llm-proxy.internal/v1', 'https://Pr0xyPassw0rd@llm-proxy.internal/v1', 'https://:Pr0xyPassw0rd@llm-proxy.internal/v1']) {
      const error = problemsOf({ ...HTTP, OPENAI_BASE_URL: value });
      expect(error.problems).toEqual([{ field: 'OPENAI_BASE_URL', message: expect.stringContaining('must not contain credentials') }]);
      expect(error.message).toContain('OPENAI_API_KEY');
      expect(error.message).not.toContain('Pr0xyPassw0rd');
    }
    expect(parseEnvironment({ ...HTTP, OPENAI_BASE_URL: 'https://llm-proxy.internal/v1' }, noFile).openai.baseUrl).toBe('https://llm-proxy.internal/v1');
  });

  it('reports every problem at once, by variable name, without echoing secret values', () => {
    const error = problemsOf({
      SLACK_BOT_TOKEN: 'xoxp-user-token-oops',
      SLACK_API_URL: 'not a url',
      PORT: '70000',
      OPENAI_API: 'completions',
      SLACK_STREAMING: 'sometimes',
      REDIS_URL: 'http://user:hunter2@redis:6379',
      LOG_LEVEL: 'verbose',
    });

    expect(error.problems.map((problem) => problem.field)).toEqual([
      'SLACK_BOT_TOKEN',
      'SLACK_SIGNING_SECRET',
      'SLACK_API_URL',
      'PORT',
      'OPENAI_API_KEY',
      'OPENAI_API',
      'SLACK_STREAMING',
      'REDIS_URL',
      'LOG_LEVEL',
    ]);
    expect(error.message).toContain('  - SLACK_BOT_TOKEN: must start with xoxb-');
    expect(error.message).not.toContain('xoxp-user-token-oops');
    expect(error.message).not.toContain('hunter2');
  });

  it('switches to Socket Mode when SLACK_APP_TOKEN is set, making the signing secret optional', () => {
    const config = parseEnvironment(
      { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1', OPENAI_API_KEY: 'k' },
      noFile,
    );
    expect(config.slack).toMatchObject({ socketMode: true, appToken: 'xapp-1' });
    expect(config.slack.signingSecret).toBeUndefined();
  });

  it('rejects an app token with the wrong prefix', () => {
    const error = problemsOf({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xoxb-2', OPENAI_API_KEY: 'k' });
    expect(error.problems).toEqual([{ field: 'SLACK_APP_TOKEN', message: expect.stringContaining('xapp-') }]);
  });

  it('reads the optional settings and normalises the Slack API URL to end with a slash', () => {
    const config = parseEnvironment(
      {
        ...HTTP,
        SLACK_API_URL: 'https://slack-gov.com/api',
        PORT: '8080',
        SLACK_BOT_USER_ID: 'U012ABC',
        SLACK_BOT_ID: 'B034DEF',
        OPENAI_BASE_URL: 'http://localhost:11434/v1',
        OPENAI_MODEL: 'llama3.1',
        OPENAI_API: 'chat',
        REDIS_URL: 'rediss://redis.internal:6380/0',
        COUNTERSIGN_CONFIG: '/etc/countersign.yml',
        LOG_LEVEL: 'DEBUG',
      },
      noFile,
    );
    expect(config.slack).toMatchObject({ apiUrl: 'https://slack-gov.com/api/', port: 8080, botUserId: 'U012ABC', botId: 'B034DEF' });
    expect(config.openai).toMatchObject({ baseUrl: 'http://localhost:11434/v1', model: 'llama3.1', api: 'chat' });
    expect(config).toMatchObject({ redisUrl: 'rediss://redis.internal:6380/0', configPath: '/etc/countersign.yml', logLevel: 'debug' });
  });

  it('treats blank values as unset, as .env files write them', () => {
    const config = parseEnvironment({ ...HTTP, SLACK_APP_TOKEN: '', REDIS_URL: '  ', PORT: '' }, noFile);
    expect(config.slack.socketMode).toBe(false);
    expect(config.redisUrl).toBeUndefined();
    expect(config.slack.port).toBe(3000);
  });

  it('wants SLACK_BOT_USER_ID and SLACK_BOT_ID together', () => {
    expect(problemsOf({ ...HTTP, SLACK_BOT_USER_ID: 'U1' }).problems).toEqual([
      { field: 'SLACK_BOT_ID', message: 'must be set together with SLACK_BOT_USER_ID' },
    ]);
  });

  it.each(['0', '-1', '3000.5', 'abc'])('rejects PORT=%s', (port) => {
    expect(problemsOf({ ...HTTP, PORT: port }).problems.map((problem) => problem.field)).toEqual(['PORT']);
  });

  it('reads METRICS_PORT and METRICS_HOST, naming a bad one', () => {
    expect(parseEnvironment({ ...HTTP, METRICS_PORT: '9464' }, noFile).metrics).toEqual({ port: 9464 });
    expect(parseEnvironment({ ...HTTP, METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1' }, noFile).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(parseEnvironment({ ...HTTP, METRICS_PORT: '9464', METRICS_HOST: '[::1]' }, noFile).metrics).toEqual({ port: 9464, host: '::1' });
    for (const port of ['0', '65536', 'metrics', '9464.5']) {
      expect(problemsOf({ ...HTTP, METRICS_PORT: port }).problems).toEqual([{ field: 'METRICS_PORT', message: 'must be an integer from 1 to 65535' }]);
    }
    expect(problemsOf({ ...HTTP, METRICS_PORT: '9464', METRICS_HOST: 'http://0.0.0.0:9464' }).problems.map((problem) => problem.field)).toEqual(['METRICS_HOST']);
    expect(problemsOf({ ...HTTP, METRICS_HOST: '0.0.0.0' }).problems).toEqual([{ field: 'METRICS_HOST', message: 'is where the METRICS_PORT listener binds: set METRICS_PORT too' }]);
    expect(problemsOf({ ...HTTP, PORT: '8080', METRICS_PORT: '8080', METRICS_HOST: '0.0.0.0' }).problems.map((problem) => problem.field)).toEqual(['METRICS_HOST']);
  });

  it('uses ./countersign.yml only when it exists', () => {
    expect(parseEnvironment(HTTP, { fileExists: (path) => path === './countersign.yml' }).configPath).toBe('./countersign.yml');
    expect(parseEnvironment(HTTP, noFile).configPath).toBeUndefined();
  });
});

describe('describeEnvironment', () => {
  it('replaces secrets with [set] and masks URL credentials', () => {
    const config = parseEnvironment(
      { ...HTTP, SLACK_APP_TOKEN: 'xapp-secret', REDIS_URL: 'redis://:hunter2@redis:6379', SLACK_API_URL: 'https://proxy-user:pw@slack.internal/api' },
      noFile,
    );
    const summary = describeEnvironment(config);
    const logged = JSON.stringify(summary);

    expect(summary.slack).toMatchObject({ botToken: '[set]', signingSecret: '[set]', appToken: '[set]', socketMode: true });
    expect(summary.openai.apiKey).toBe('[set]');
    expect(summary.redisUrl).toBe('[set]');
    for (const secret of ['xoxb-secret-bot-token', 'signing-secret-value', 'sk-secret-openai-key', 'xapp-secret', 'hunter2', 'pw@', 'proxy-user']) {
      expect(logged).not.toContain(secret);
    }
    expect(summary.slack.apiUrl).toContain('slack.internal/api');
  });
});
