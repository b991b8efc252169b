import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mockStreamingModel } from '../../test/helpers/mock-streaming-model.js';
import { runTurn, TurnFailedError } from '../agent/run-turn.js';
import { prepareAuditEvent } from '../audit/prepare-audit-event.js';
import { defaultConfig } from '../config/config-file.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { createLogger } from '../log/create-logger.js';
import { createTurnFailure } from './turn-failure.js';

/**
 * The audit trail hides secret-looking keys of tool inputs (`redactSecrets`: "the trail is read by
 * more people (and SIEMs) than the tool ever was"). When the model fails after a tool ran, the
 * `turn-failed` line logs the TurnFailedError, which holds every call's raw input and whole output:
 * pino's err serializer copies an error's enumerable fields, and the logger's redact paths
 * (`*.token`, `*.apiKey`: one level deep) never reach `err.executions[0].input.password`.
 */
describe('the turn-failed log line', () => {
  it('does not carry secret tool inputs or tool output that the audit trail redacts', async () => {
    const login: ToolDefinition = {
      name: 'db_login',
      description: 'Log in to the database',
      inputSchema: z.object({ user: z.string(), password: z.string(), api_token: z.string() }),
      approval: 'never',
      execute: async () => ({ session: 'sess-OUTPUT-9f2c', rows: 'customer ssn 078-05-1120' }),
    };
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
    let calls = 0;
    const model = mockStreamingModel(async () => {
      calls += 1;
      if (calls === 1) {
        return {
          content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'db_login', input: JSON.stringify({ user: 'root', password: 'hunter2-PASSWORD', api_token: 'tok-INPUT-7a1b' }) }],
          finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
          usage,
          warnings: [],
        };
      }
      throw new Error('model server went away');
    });
    const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };
    const error = await runTurn({ model, instructions: 'test', definitions: [login], policy: defaultConfig().policy, messages: [{ role: 'user', content: 'log in' }], context, maxSteps: 5, maxRetries: 0 }).catch(
      (caught: unknown) => caught,
    );

    // The production logger, and the production failure path (turn-failure.ts).
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ level: 'info', destination });
    const recordTurnFailure = createTurnFailure({ store: { executingCalls: async () => new Map() } as never, logger, now: () => 0 });
    const thread = { threadKey: 'T1:C1:1.1', channel: 'C1', threadTs: '1.1', messages: [] } as never;
    const scope = { save: async () => {}, saveAtEnd: () => {}, messenger: { postNotice: async () => {} } } as never;
    await recordTurnFailure(scope, thread, { error, requesterId: 'UALICE', answer: { openNow: () => undefined, streamed: '' } as never });

    const failed = lines.find((line) => line.includes('"turn-failed"'));
    expect(failed).toBeDefined();
    // What the audit trail keeps of the same input.
    expect(JSON.stringify(prepareAuditEvent({ type: 'tool-started', toolName: 'db_login', toolCallId: 'c1', channel: 'C1', threadTs: '1.1', input: { user: 'root', password: 'hunter2-PASSWORD', api_token: 'tok-INPUT-7a1b' }, inputHash: 'h', basis: { kind: 'no-approval-needed' } }, () => 0))).not.toContain('hunter2');
    expect(failed).not.toContain('hunter2-PASSWORD');
    expect(failed).not.toContain('tok-INPUT-7a1b');
    expect(failed).not.toContain('sess-OUTPUT-9f2c');
    // What ran is still told, by id and name.
    expect(JSON.parse(failed!)).toMatchObject({ err: { type: 'TurnFailedError', message: expect.stringContaining('model server went away') }, calls: [{ toolCallId: 'c1', toolName: 'db_login', failed: false }] });
  });

  it('leaves the calls out wherever a TurnFailedError is logged, whatever the logger', () => {
    const error = new TurnFailedError({
      cause: new Error('model server went away'),
      executions: [
        { toolCallId: 'c1', toolName: 'db_login', input: { password: 'hunter2-PASSWORD' }, output: { session: 'sess-OUTPUT-9f2c' } },
        { toolCallId: 'c2', toolName: 'db.query', input: { sql: 'select 1' }, error: 'db.query reported an error: alice 078-05-1120' },
      ],
    });
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }));
    logger.error({ err: error }, 'failed');
    logger.error(error);
    for (const written of [...lines, JSON.stringify(error), inspect(error), JSON.stringify({ ...error })]) {
      expect(written).not.toContain('hunter2-PASSWORD');
      expect(written).not.toContain('sess-OUTPUT-9f2c');
      expect(written).not.toContain('078-05-1120');
    }
    // The turn still has them, to record what ran.
    expect(error.executions.map((execution) => execution.toolCallId)).toEqual(['c1', 'c2']);
  });
});
