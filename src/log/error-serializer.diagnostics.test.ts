import net from 'node:net';
import { Writable } from 'node:stream';
import { stdSerializers } from 'pino';
import { WebAPIPlatformError } from '@slack/web-api';
import { describe, expect, it } from 'vitest';
import { createLogger } from './create-logger.js';

function capture() {
  let text = '';
  const destination = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), line: () => JSON.parse(text.trim().split('\n').at(-1) ?? '{}') as Record<string, any>, text: () => text };
}

describe('review: diagnostics an operator needs survive the error serializer', () => {
  it("keeps an AggregateError's inner errors (Node's connect to a host with several addresses)", async () => {
    // What net.connect fails with when a host (`localhost` on most systems) resolves to ::1 and
    // 127.0.0.1 (autoSelectFamily, Node's default): an AggregateError with an EMPTY message; which
    // addresses were refused is only in its inner errors. ioredis hands this error on as it is.
    const error = await new Promise<Error>((resolve) => {
      const socket = net.connect({ port: 1, host: 'redis.internal', autoSelectFamily: true, lookup: ((_host: string, _options: unknown, callback: (error: null, addresses: Array<{ address: string; family: number }>) => void) => callback(null, [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }])) as never });
      socket.on('error', resolve);
    });
    expect(error).toBeInstanceOf(AggregateError);
    expect(error.message).toBe('');
    // pino's own serializer (before 07d6464) wrote them as `aggregateErrors`:
    expect((stdSerializers.err(error) as { aggregateErrors?: unknown[] }).aggregateErrors).toHaveLength(2);
    const { logger, line } = capture();
    logger.error({ event: 'store-unreachable', err: error }, 'could not connect');
    // The new serializer means to (its `errors` branch), but AggregateError#errors is not enumerable,
    // so `for…in` never sees it: the line says only {type: AggregateError, message: "", code: ECONNREFUSED}.
    expect(line().err.aggregateErrors?.map((each: { message: string }) => each.message)).toEqual(['connect ECONNREFUSED ::1:1', 'connect ECONNREFUSED 127.0.0.1:1']);
  });

  it("keeps which block Slack refused on an invalid_blocks card post (card-post-failed)", () => {
    const error = new WebAPIPlatformError({
      ok: false,
      error: 'invalid_blocks',
      response_metadata: { messages: ['[ERROR] must be less than 3001 characters [json-pointer:/blocks/2/text/text]'] },
    } as never);
    const { logger, text } = capture();
    logger.error({ event: 'card-post-failed', stepId: 's1', err: error }, 'could not post approval card');
    expect(text()).toContain('/blocks/2/text/text');
  });

  it("keeps the scopes a missing_scope needed and had, and no other nested field of Slack's reply", () => {
    const error = new WebAPIPlatformError({ ok: false, error: 'missing_scope', needed: 'chat:write', provided: 'commands', headers: { authorization: 'Bearer xoxb-nested' }, response_metadata: { scopes: ['commands'], warnings: ['missing_charset'] } } as never);
    const { logger, line } = capture();
    logger.error({ event: 'card-post-failed', err: error }, 'could not post approval card');
    expect(line().err.data).toEqual({ error: 'missing_scope', needed: 'chat:write', provided: 'commands', response_metadata: { warnings: ['missing_charset'] } });
  });

  it("keeps the name of the command ioredis says Redis refused, never its arguments", () => {
    const error = Object.assign(new Error('WRONGPASS invalid username-password pair'), { command: { name: 'hello', args: ['3', 'AUTH', 'default', 'NESTED-PASSWORD'] }, extra: { note: 'x' } });
    const { logger, line, text } = capture();
    logger.error({ event: 'decision-store-failed', err: error }, 'could not record decision');
    expect(text()).not.toContain('NESTED-PASSWORD');
    expect(line().err.command).toEqual({ name: 'hello' });
    expect(line().err.omitted).toEqual(['extra']);
  });
});
