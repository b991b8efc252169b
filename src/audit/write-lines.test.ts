import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { writeLines } from './write-lines.js';

describe('writeLines', () => {
  it('waits for drain when the stream is full, and writes every line in order', async () => {
    const stream = new PassThrough({ highWaterMark: 8 });
    let drains = 0;
    stream.on('drain', () => drains++);
    const lines = Array.from({ length: 50 }, (_, index) => `line ${index}\n`);
    const written = writeLines(stream, lines);
    // Nobody reads yet: the buffer fills, so writeLines must be waiting rather than done.
    let done = false;
    void written.then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    expect(stream.writableLength).toBeLessThan(20);
    const chunks: string[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    await written;
    expect(drains).toBeGreaterThan(0);
    stream.end();
    await new Promise((resolve) => stream.on('end', resolve));
    expect(chunks.join('')).toBe(lines.join(''));
  });

  it('stops when the stream is closed while it waits (the reader went away)', async () => {
    const seen: string[] = [];
    const stream = new Writable({
      highWaterMark: 1,
      write: (chunk: Buffer, _encoding, callback) => {
        seen.push(chunk.toString());
        callback();
      },
    });
    stream.cork();
    const write = vi.spyOn(stream, 'write');
    const written = writeLines(stream, ['a\n', 'b\n', 'c\n']);
    stream.destroy();
    await written;
    // The first line filled the (corked) buffer; once the stream closed nothing more was written to it.
    expect(write).toHaveBeenCalledTimes(1);
    expect(seen).toEqual([]);
  });

  it('writes everything to an output without backpressure', async () => {
    let text = '';
    await writeLines({ write: (line: string) => (text += line) }, ['a\n', 'b\n']);
    expect(text).toBe('a\nb\n');
  });
});
