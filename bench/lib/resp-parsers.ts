/** A command as the counting proxy sees it on the way to Redis. */
export interface RedisCommand {
  /** Upper-case command name. */
  name: string;
  /** The first key: the first argument, or for EVAL/EVALSHA the first key after numkeys. */
  key?: string;
}

/** Incremental parser of client-side RESP: arrays of bulk strings (what ioredis sends). */
export function createRespCommandParser(): { push(chunk: Buffer): RedisCommand[]; atBoundary(): boolean } {
  let buffer: Buffer = Buffer.alloc(0);

  function readLine(offset: number): { line: string; next: number } | undefined {
    const end = buffer.indexOf('\r\n', offset);
    if (end === -1) return undefined;
    return { line: buffer.toString('latin1', offset, end), next: end + 2 };
  }

  function parseOne(): { command: RedisCommand; next: number } | undefined {
    const header = readLine(0);
    if (!header) return undefined;
    if (!header.line.startsWith('*')) {
      // An inline command (redis-cli style): the whole line.
      const [name = '', key] = header.line.trim().split(/\s+/);
      return { command: { name: name.toUpperCase(), ...(key ? { key } : {}) }, next: header.next };
    }
    const count = Number(header.line.slice(1));
    const args: string[] = [];
    let offset = header.next;
    for (let index = 0; index < count; index += 1) {
      const lengthLine = readLine(offset);
      if (!lengthLine) return undefined;
      const length = Number(lengthLine.line.slice(1));
      const end = lengthLine.next + length;
      if (buffer.length < end + 2) return undefined;
      // Only the first few arguments matter (name, keys); values can be large.
      if (index < 5) args.push(buffer.toString('utf8', lengthLine.next, Math.min(end, lengthLine.next + 256)));
      offset = end + 2;
    }
    const name = (args[0] ?? '').toUpperCase();
    const key = name === 'EVAL' || name === 'EVALSHA' ? (Number(args[2]) > 0 ? args[3] : undefined) : args[1];
    return { command: { name, ...(key === undefined ? {} : { key }) }, next: offset };
  }

  return {
    atBoundary: () => buffer.length === 0,
    push(chunk) {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      const commands: RedisCommand[] = [];
      for (;;) {
        const parsed = parseOne();
        if (!parsed) break;
        commands.push(parsed.command);
        buffer = buffer.subarray(parsed.next);
      }
      if (buffer.length === 0) buffer = Buffer.alloc(0);
      return commands;
    },
  };
}

/**
 * Incremental parser of Redis's replies (RESP2, and RESP3's types): for each whole top-level reply,
 * whether it is a null (a blocking pop that timed out answers with one).
 */
export function createRespReplyParser(): { push(chunk: Buffer): Array<{ isNull: boolean }> } {
  let buffer: Buffer = Buffer.alloc(0);

  /** The reply at `offset`: where it ends and whether it is a null; undefined while incomplete. */
  function parseAt(offset: number): { next: number; isNull: boolean } | undefined {
    const end = buffer.indexOf('\r\n', offset);
    if (end === -1) return undefined;
    const type = String.fromCharCode(buffer[offset] ?? 0);
    const header = buffer.toString('latin1', offset + 1, end);
    const afterHeader = end + 2;
    switch (type) {
      case '$':
      case '=':
      case '!': {
        const length = Number(header);
        if (length < 0) return { next: afterHeader, isNull: true };
        return buffer.length < afterHeader + length + 2 ? undefined : { next: afterHeader + length + 2, isNull: false };
      }
      case '*':
      case '~':
      case '>':
      case '%':
      case '|': {
        const count = Number(header);
        if (count < 0) return { next: afterHeader, isNull: true };
        let next = afterHeader;
        for (let index = 0; index < count * (type === '%' || type === '|' ? 2 : 1); index += 1) {
          const element = parseAt(next);
          if (!element) return undefined;
          next = element.next;
        }
        // An attribute comes before the reply it describes.
        if (type === '|') return parseAt(next);
        return { next, isNull: false };
      }
      case '_':
        return { next: afterHeader, isNull: true };
      default:
        // + - : , # ( : one line.
        return { next: afterHeader, isNull: false };
    }
  }

  return {
    push(chunk) {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      const replies: Array<{ isNull: boolean }> = [];
      for (;;) {
        const parsed = buffer.length === 0 ? undefined : parseAt(0);
        if (!parsed) break;
        replies.push({ isNull: parsed.isNull });
        buffer = buffer.subarray(parsed.next);
      }
      return replies;
    },
  };
}
