import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ArgvTemplateError } from '../tools/command/argv-template.js';
import { AuditUsageError } from '../audit/parse-audit-arguments.js';
import { ConfigError } from '../config/config-error.js';
import { ModelTimeoutError } from '../agent/model-watchdog.js';
import { TurnFailedError } from '../agent/run-turn.js';
import { StepContendedError } from '../approvals/transitions/commit-transition.js';
import { FencedError, isFencedError } from '../store/fenced-error.js';
import { NewerSchemaError } from '../store/newer-schema-error.js';
import { AuditAppendError } from '../store/redis-audit-log.js';
import { CountersignError, ErrorCode, errorCodeOf, SlackCallError, SlackResponseError } from './countersign-error.js';

const errors: CountersignError[] = [
  new ConfigError({ problems: [{ field: 'SLACK_BOT_TOKEN', message: 'is required' }] }),
  new ArgvTemplateError({ message: 'unclosed placeholder', element: '{service' }),
  new FencedError('T1:C1:1.0'),
  new StepContendedError({ stepId: 'step-1', attempts: 25 }),
  new ModelTimeoutError({ timeoutMs: 30_000 }),
  new TurnFailedError({ cause: new Error('boom'), executions: [] }),
  new SlackResponseError({ method: 'chat.postMessage', missing: 'ts' }),
  new SlackCallError({ method: 'auth.test', cause: new Error('fetch failed') }),
  new AuditAppendError({ eventType: 'decision', cause: new Error('READONLY') }),
  new AuditUsageError('--limit must be a whole number above 0'),
  new NewerSchemaError({ kind: 'step', id: 'step-1', found: 3, readable: 2 }),
];

describe('coded errors', () => {
  it('give every runtime failure its own stable code and a name that says which it is', () => {
    const codes = errors.map((error) => error.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const error of errors) {
      expect(Object.values(ErrorCode)).toContain(error.code);
      expect(error.name).toBe(error.constructor.name);
      expect(errorCodeOf(error)).toBe(error.code);
    }
    expect(errorCodeOf(new Error('plain'))).toBeUndefined();
    expect(isFencedError(new FencedError('T1:C1:1.0'))).toBe(true);
    expect(isFencedError(new StepContendedError({ stepId: 's', attempts: 1 }))).toBe(false);
  });

  it('are recognised by their code even from another copy of the module, and the code reaches the JSON logs', () => {
    const copied = Object.assign(Object.create(Error.prototype), { ...new FencedError('T1:C1:1.0') });
    expect(CountersignError.isInstance(copied)).toBe(true);
    expect(isFencedError(copied)).toBe(true);

    const lines: string[] = [];
    const logger = pino({ base: null }, { write: (line: string) => lines.push(line) });
    logger.error({ err: new StepContendedError({ stepId: 'step-9', attempts: 25 }) }, 'decision failed');
    expect(JSON.parse(lines[0] ?? '{}').err).toMatchObject({ type: 'StepContendedError', code: 'countersign_step_contended', stepId: 'step-9' });
  });
});
