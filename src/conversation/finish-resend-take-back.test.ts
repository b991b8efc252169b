import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../store/redis-store.js';
import { THREAD_STATE_SCHEMA_VERSION, type ThreadState } from '../store/thread-state.js';
import { createThreadWorker } from './thread-worker.js';
import { encodeWorkItem, type WorkItem } from './work-item.js';

/**
 * Review: a proxy in front of Redis that cuts the connection once Redis has answered the first
 * MULTI/EXEC (the item's finish with its closing save: the transaction ran), and holds the
 * client's next connection until `release()`: ioredis sends the transaction again once it is back
 * (its autoResendUnfulfilledCommands), as it does for any command whose reply it never got.
 */
async function startExecLosingProxy(redisUrl: string) {
  const target = new URL(redisUrl);
  let cut = false;
  let released = false;
  let onCut: () => void = () => {};
  const cutDone = new Promise<void>((resolve) => (onCut = resolve));
  const waitingForRelease: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    const heldBack = cut && !released;
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    const pending: Buffer[] = [];
    let piping = !heldBack;
    if (heldBack)
      waitingForRelease.push(() => {
        piping = true;
        for (const chunk of pending.splice(0)) upstream.write(chunk);
      });
    let armed = false;
    client.on('data', (chunk: Buffer) => {
      if (!cut && /\r\nexec\r\n/i.test(chunk.toString('latin1'))) armed = true;
      if (piping) upstream.write(chunk);
      else pending.push(chunk);
    });
    upstream.on('data', (chunk) => {
      if (armed && !cut) {
        cut = true;
        client.destroy();
        upstream.destroy();
        onCut();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    cutDone,
    release() {
      released = true;
      for (const go of waitingForRelease.splice(0)) go();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const item = (threadTs: string): WorkItem => ({ kind: 'retry', failureId: 'f1', clickedBy: 'U1', teamId: 'T1', channel: 'C1', threadTs });

describe('an item whose finish (with its closing save) landed, its reply lost, and another process took the thread before the resend', () => {
  it('keeps the posted answer: the closing save that records it was written, nobody shows it again', async () => {
    const proxy = await startExecLosingProxy(inject('redisUrl'));
    const keyPrefix = `finish-resend:${randomUUID()}:`;
    const a = createRedisStore({ url: proxy.url, keyPrefix });
    const b = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    const threadTs = `1700000000.${String(Date.now()).slice(-6)}`;
    const threadKey = `T1:C1:${threadTs}`;
    const takenBack: string[] = [];
    const answered: ThreadState = { schemaVersion: THREAD_STATE_SCHEMA_VERSION, threadKey, teamId: 'T1', channel: 'C1', threadTs, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'the answer' }], updatedAt: Date.now() };
    try {
      const worker = createThreadWorker({
        store: a,
        logger: pino({ level: 'silent' }),
        // Process A posted the answer (whole, not streamed) and saves the thread with the outbox cleared at the finish.
        handle: async () => ({ closing: { thread: answered, ttlMs: 60_000 }, takeBack: async () => void takenBack.push('deleted the posted answer') }),
      });
      const drained = worker.submit(threadKey, item(threadTs));
      // Redis ran the finish (the closing save written, the lock released); A never heard back.
      await proxy.cutDone;
      // Meanwhile a new message in the thread reaches process B, which takes the free lock.
      const claim = await b.enqueueWork(threadKey, encodeWorkItem(item(`${threadTs}-next`)), 60_000);
      expect(claim, 'B took the thread lock A released').toBeDefined();
      // B reads the thread: A's closing save is there (no outbox to show again).
      const seenByB = await b.getThread(threadKey);
      expect(seenByB?.messages.at(-1)).toEqual({ role: 'assistant', content: 'the answer' });
      // A's client reconnects and sends the transaction again; it is refused as fenced (B's token).
      proxy.release();
      await drained;
      await worker.idle();
      expect(takenBack, 'A took back (deleted) the answer whose save was written: the only copy is gone').toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await proxy.close();
    }
  });
});
