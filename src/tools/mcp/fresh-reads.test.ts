import { describe, expect, it } from 'vitest';
import { createFreshReads } from './fresh-reads.js';

/** A read per call of `read`, each answered when the test says: `begun` lists them in order. */
function controlledReads() {
  const begun: Array<{ key: object; answer: (value: number) => void; fail: (error: Error) => void }> = [];
  const read = (key: object) =>
    new Promise<number>((resolve, reject) => {
      begun.push({ key, answer: resolve, fail: reject });
    });
  return { begun, read };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('createFreshReads', () => {
  it('gives a caller who asks while a read is under way the next read, begun after that one ended, shared by all who asked meanwhile', async () => {
    const { begun, read } = controlledReads();
    const reads = createFreshReads(read);
    const key = {};
    const first = reads.ask(key);
    const second = reads.ask(key);
    const third = reads.ask(key);
    expect(begun).toHaveLength(1);
    begun[0]!.answer(1);
    expect(await first).toBe(1);
    await settled();
    // The one shared by the two who asked while the first was under way, begun only now.
    expect(begun).toHaveLength(2);
    begun[1]!.answer(2);
    expect([await second, await third]).toEqual([2, 2]);
    // Nothing under way: the next caller begins its own.
    const fourth = reads.ask(key);
    expect(begun).toHaveLength(3);
    begun[2]!.answer(3);
    expect(await fourth).toBe(3);
  });

  it('fails only the callers of the read that failed; those waiting for the next get it', async () => {
    const { begun, read } = controlledReads();
    const reads = createFreshReads(read);
    const key = {};
    const first = reads.ask(key);
    const second = reads.ask(key);
    begun[0]!.fail(new Error('timed out'));
    await expect(first).rejects.toThrow('timed out');
    await settled();
    begun[1]!.answer(2);
    expect(await second).toBe(2);
  });

  it('never shares a read between keys (two connections)', async () => {
    const { begun, read } = controlledReads();
    const reads = createFreshReads(read);
    const one = {};
    const other = {};
    const first = reads.ask(one);
    const second = reads.ask(other);
    expect(begun.map((entry) => entry.key)).toEqual([one, other]);
    begun[0]!.answer(1);
    begun[1]!.answer(2);
    expect([await first, await second]).toEqual([1, 2]);
  });

  it('stops the wait of a caller whose signal aborts, and only its: the read goes on for those sharing it', async () => {
    const { begun, read } = controlledReads();
    const reads = createFreshReads(read);
    const key = {};
    const first = reads.ask(key);
    // Both asked while the first read is under way: they share the next.
    const stop = new AbortController();
    const stopped = reads.ask(key, stop.signal);
    const other = reads.ask(key, new AbortController().signal);
    stop.abort(new Error('the turn failed'));
    await expect(stopped).rejects.toThrow('the turn failed');
    begun[0]!.answer(1);
    expect(await first).toBe(1);
    await settled();
    expect(begun).toHaveLength(2);
    begun[1]!.answer(2);
    expect(await other).toBe(2);
  });

  it('begins no read for a caller whose signal aborted before it asked', async () => {
    const { begun, read } = controlledReads();
    const reads = createFreshReads(read);
    await expect(reads.ask({}, AbortSignal.abort(new Error('stopped')))).rejects.toThrow('stopped');
    expect(begun).toHaveLength(0);
  });
});
