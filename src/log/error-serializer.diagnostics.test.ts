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

describe('review: the serializer never throws from a log call', () => {
  it('logs an Error whose message is not a string (pino before 07d6464 wrote it as it was)', () => {
    // Some libraries set an object as `message` (a JSON error body); pino's own serializer passes such
    // an error through, the new one calls .replace on it and the log call itself throws.
    const odd = Object.assign(new Error('x'), { message: { error: 'bad_request' } as unknown as string });
    const { logger } = capture();
    expect(() => logger.error({ event: 'turn-failed', err: odd }, 'agent turn failed')).not.toThrow();
  });
  it('writes the message that is not a string as text', () => {
    const odd = Object.assign(new Error('x'), { message: 42 as unknown as string });
    const { logger, line } = capture();
    logger.error({ event: 'turn-failed', err: odd }, 'agent turn failed');
    expect(line().err).toMatchObject({ type: 'Error', message: '42' });
  });

  it('writes a field whose getter throws as unreadable, and the rest as usual', () => {
    const odd = new Error('boom');
    Object.defineProperty(odd, 'status', { enumerable: true, get: () => { throw new Error('getter'); } });
    Object.defineProperty(odd, 'message', { get: () => { throw new Error('getter'); } });
    const tagged = Object.assign(new Error('tagged'), { code: 'E_TAG', inner: odd });
    const { logger, line } = capture();
    expect(() => logger.error({ event: 'turn-failed', err: tagged }, 'agent turn failed')).not.toThrow();
    expect(line().err).toMatchObject({ message: 'tagged', code: 'E_TAG', inner: { type: 'Error', message: '[unreadable]', status: '[unreadable]' } });
  });

  it('logs a frozen error, and an error it cannot walk at all', () => {
    const frozen = Object.freeze(Object.assign(new Error('frozen'), { code: 'E_FROZEN' }));
    const walled = new Proxy(new Error('walled'), { ownKeys: () => { throw new Error('trap'); } });
    const { logger, text } = capture();
    expect(() => logger.error({ err: frozen }, 'frozen')).not.toThrow();
    expect(() => logger.error({ err: walled }, 'walled')).not.toThrow();
    const [first, second] = text().trim().split('\n').map((each) => JSON.parse(each) as Record<string, any>);
    expect(first?.err).toMatchObject({ message: 'frozen', code: 'E_FROZEN' });
    expect(second?.err).toMatchObject({ message: 'walled' });
  });
});

describe('a URL quoted in an error', () => {
  it('has its whole password masked when the password holds an `@` (the userinfo ends at the last `@`)', () => {
    const error = new Error('could not connect to redis://:p@ssword-123@redis.internal:6379/0 (and https://host/a@b stays)');
    const { logger, line } = capture();
    logger.error({ err: error }, 'could not connect');
    expect(line().err.message).toBe('could not connect to redis://[masked]@redis.internal:6379/0 (and https://host/a@b stays)');
  });
});


describe('the error serializer on untrusted text', () => {
  /**
   * Not a performance assertion: a guard against a quadratic URL pattern. An error's message can quote
   * a tool's or a server's output; with the scheme unbounded (the serializer's own copy of the pattern
   * before the shared `withoutUrlUserinfo`), 100 KB of `a.a.a…` took 2.8 s of a blocked event loop and
   * 400 KB about a minute; bounded, a few milliseconds. 10 s is far from both on a loaded machine.
   */
  it('masks URL credentials in 400 KB of a run of scheme characters in far less than the quadratic pattern took', () => {
    const { logger, line } = capture();
    const started = performance.now();
    logger.error({ err: new Error(`${'a.'.repeat(200_000)} redis://:hunter2-secret@host:6379`) }, 'failed');
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(JSON.stringify(line())).not.toContain('hunter2-secret');
  });
});
