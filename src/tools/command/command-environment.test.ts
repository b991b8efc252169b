import { describe, expect, it } from 'vitest';
import { commandEnvironment, withholding } from './command-environment.js';

describe('commandEnvironment', () => {
  const parentEnvironment = {
    PATH: '/usr/bin',
    HOME: '/home/bot',
    KUBECONFIG: '/etc/kube/config',
    SLACK_BOT_TOKEN: 'xoxb-1',
    SLACK_SIGNING_SECRET: 's',
    SLACK_APP_TOKEN: 'xapp-1',
    OPENAI_API_KEY: 'sk-1',
    REDIS_URL: 'redis://:pw@redis',
    GITHUB_TOKEN: 'ghp',
    AWS_SECRET_ACCESS_KEY: 'aws',
    DB_PASSWORD: 'pw',
    webhook_secret: 'lower',
  };

  it('passes ordinary variables and strips the bot secrets and *_TOKEN/_SECRET/_KEY/_PASSWORD', () => {
    expect(commandEnvironment({ parentEnvironment })).toEqual({ PATH: '/usr/bin', HOME: '/home/bot', KUBECONFIG: '/etc/kube/config' });
  });

  it('keeps a secret that is passed explicitly, and lets undefined remove a variable', () => {
    expect(commandEnvironment({ parentEnvironment, environment: { GITHUB_TOKEN: 'scoped', HOME: undefined } })).toEqual({
      PATH: '/usr/bin',
      KUBECONFIG: '/etc/kube/config',
      GITHUB_TOKEN: 'scoped',
    });
  });

  it('withholds the variables the config reads as secrets, unless the environment passes one on purpose', () => {
    const parent = { PATH: '/usr/bin', PAGERDUTY_API: 'pd', DB_DSN: 'postgres://u:p@db' };
    expect(commandEnvironment({ parentEnvironment: parent, environment: withholding(['PAGERDUTY_API', 'DB_DSN']) })).toEqual({ PATH: '/usr/bin' });
    expect(commandEnvironment({ parentEnvironment: parent, environment: withholding(['PAGERDUTY_API', 'DB_DSN'], { DB_DSN: 'postgres://scoped' }) })).toEqual({
      PATH: '/usr/bin',
      DB_DSN: 'postgres://scoped',
    });
  });
});
