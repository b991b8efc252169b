import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { watchLogOutput, whenOutputBreaks } from './when-output-breaks.js';

const epipe = () => Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });

describe('whenOutputBreaks', () => {
  it('resolves with the error code on the first failure, reports it once and swallows the rest', async () => {
    const output = new EventEmitter();
    const reports: string[] = [];
    const broken = whenOutputBreaks({ output, report: (line) => reports.push(line) });
    output.emit('error', epipe());
    output.emit('error', epipe());
    output.emit('error', new Error('write after end'));
    await expect(broken).resolves.toBe('EPIPE');
    expect(reports).toEqual(['countersign: writing its log output failed (EPIPE); stopping\n']);
  });

  it('names an error without a code by its message', async () => {
    const output = new EventEmitter();
    const broken = whenOutputBreaks({ output, report: () => {} });
    output.emit('error', new Error('stream destroyed'));
    await expect(broken).resolves.toBe('stream destroyed');
  });

  it('still resolves when the report cannot be written either', async () => {
    const output = new EventEmitter();
    const broken = whenOutputBreaks({
      output,
      report: () => {
        throw epipe();
      },
    });
    // Without a listener this emit would throw; the watcher is that listener.
    expect(() => output.emit('error', epipe())).not.toThrow();
    await expect(broken).resolves.toBe('EPIPE');
  });
});

describe('watchLogOutput', () => {
  it('resolves with the first failure, stdout or another writer, and writes the line on stderr once', async () => {
    const stdout = new EventEmitter();
    const lines: string[] = [];
    const watched = watchLogOutput({ stdout, stderr: { write: (line) => lines.push(line) } });
    watched.otherWriterFailed('EPIPE');
    await expect(watched.broken).resolves.toBe('EPIPE');
    // The process's own stdout fails too as it says it is stopping.
    stdout.emit('error', epipe());
    await Promise.resolve();
    expect(lines).toEqual(['countersign: writing its log output failed (EPIPE); stopping\n']);
  });

  it('resolves when stdout fails first', async () => {
    const stdout = new EventEmitter();
    const lines: string[] = [];
    const watched = watchLogOutput({ stdout, stderr: { write: (line) => lines.push(line) } });
    stdout.emit('error', epipe());
    await expect(watched.broken).resolves.toBe('EPIPE');
    watched.otherWriterFailed('EPIPE');
    await Promise.resolve();
    expect(lines).toHaveLength(1);
  });
});
