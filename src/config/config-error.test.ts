import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';

describe('ConfigError', () => {
  it('lists every problem, one per line, and keeps them as data', () => {
    const problems = [
      { field: 'SLACK_BOT_TOKEN', message: 'is required' },
      { field: 'countersign.yml tools[1].parameters.namespace.enum', message: 'must list at least one value' },
    ];
    const error = new ConfigError({ problems });

    expect(error.message).toBe(
      'Invalid configuration:\n' +
        '  - SLACK_BOT_TOKEN: is required\n' +
        '  - countersign.yml tools[1].parameters.namespace.enum: must list at least one value',
    );
    expect(error.problems).toEqual(problems);
    expect(error.name).toBe('ConfigError');
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(ConfigError.isInstance(new Error('x'))).toBe(false);
  });
});
