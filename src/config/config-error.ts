/**
 * One thing wrong with the configuration. `field` names where (an environment variable or a path
 * into the config file, e.g. `countersign.yml tools[1].parameters.namespace.enum`); `message` says
 * what is wrong. Neither ever holds a secret's value, so the whole error is safe to log.
 */
export interface ConfigProblem {
  field: string;
  message: string;
}

import { CountersignError, ErrorCode } from '../errors/countersign-error.js';

const MARKER = Symbol.for('countersign.error.ConfigError');

/**
 * Thrown at start-up when the environment or the config file is invalid. It carries every problem
 * found, not just the first, so an operator can fix them all in one edit-and-restart cycle.
 */
export class ConfigError extends CountersignError {
  override readonly name = 'ConfigError';
  readonly code = ErrorCode.ConfigInvalid;
  readonly problems: ConfigProblem[];
  private readonly [MARKER] = true;

  constructor({ problems, cause }: { problems: ConfigProblem[]; cause?: unknown }) {
    super(formatConfigProblems(problems), { cause });
    this.problems = problems;
  }

  /** Works across duplicate copies of this module, unlike `instanceof`. */
  static override isInstance(error: unknown): error is ConfigError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}

export function formatConfigProblems(problems: ConfigProblem[]): string {
  const lines = problems.map((problem) => `  - ${problem.field}: ${problem.message}`);
  return ['Invalid configuration:', ...lines].join('\n');
}
