/**
 * Where the CLI writes: process.stdout, or a plain `{ write }` in tests. The rest is what a Node
 * stream has for backpressure; an output without it is taken to accept everything at once.
 */
export interface Output {
  write(text: string): unknown;
  once?(event: 'drain' | 'close', listener: () => void): unknown;
  off?(event: 'drain' | 'close', listener: () => void): unknown;
  /** True once the stream is closed, as after `| head` exits (EPIPE): nothing more can be written. */
  readonly destroyed?: boolean;
}

/**
 * Writes line after line, never the whole output as one string: a long window of the trail is more
 * than V8 can hold in one (about 512 Mi characters), and a pipe to a slow reader would otherwise
 * buffer all of it in memory. When `write` returns false the stream's buffer is full, so this waits
 * for 'drain'; or for 'close', after which (the reader went away) it stops.
 */
export async function writeLines(output: Output, lines: Iterable<string>): Promise<void> {
  for (const line of lines) {
    if (output.destroyed) return;
    if (output.write(line) === false && output.once !== undefined) await drained(output);
  }
}

function drained(output: Output): Promise<void> {
  if (output.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      output.off?.('drain', done);
      output.off?.('close', done);
      resolve();
    };
    output.once?.('drain', done);
    output.once?.('close', done);
  });
}
