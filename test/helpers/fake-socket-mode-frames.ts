import { createHash } from 'node:crypto';

/**
 * The server half of RFC 6455 that the fake Socket Mode endpoint needs: the opening handshake,
 * unmasking client frames and writing unmasked server frames. No extensions are negotiated, so
 * undici's WebSocket (what @slack/socket-mode 3 uses) never compresses what it sends us.
 */

export const OPCODE = {
  continuation: 0x0,
  text: 0x1,
  binary: 0x2,
  close: 0x8,
  ping: 0x9,
  pong: 0xa,
} as const;

export interface WebSocketFrame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
}

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** Far above anything Slack's client sends (acks are small JSON); guards against a corrupt length. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export function acceptKey(secWebSocketKey: string): string {
  return createHash('sha1').update(`${secWebSocketKey}${HANDSHAKE_GUID}`).digest('base64');
}

export function handshakeResponse(secWebSocketKey: string): string {
  return [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${acceptKey(secWebSocketKey)}`,
    '',
    '',
  ].join('\r\n');
}

/** A server frame: never masked (RFC 6455 §5.1), always a single final fragment. */
export function encodeFrame(opcode: number, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  let header: Buffer;
  if (body.length < 126) {
    header = Buffer.from([0x80 | opcode, body.length]);
  } else if (body.length < 65_536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(body.length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(body.length), 2);
  }
  return Buffer.concat([header, body]);
}

export function closePayload(code: number, reason = ''): Buffer {
  const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2, 'utf8');
  return payload;
}

/**
 * Accumulates bytes from the socket and hands out complete, unmasked client frames. Calls
 * `onProtocolError` (and stops) on anything a conforming client would never send.
 */
export function createFrameReader(options: {
  onFrame: (frame: WebSocketFrame) => void;
  onProtocolError: (message: string) => void;
}): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  let failed = false;

  return (chunk) => {
    if (failed) return;
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      if (pending.length < 2) return;
      const first = pending[0]!;
      const second = pending[1]!;
      if ((first & 0x70) !== 0) return fail('reserved bits set without a negotiated extension');
      if ((second & 0x80) === 0) return fail('client frames must be masked');
      let length = second & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (pending.length < 4) return;
        length = pending.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (pending.length < 10) return;
        const long = pending.readBigUInt64BE(2);
        if (long > BigInt(MAX_FRAME_BYTES)) return fail(`frame of ${long} bytes is too large`);
        length = Number(long);
        offset = 10;
      }
      if (length > MAX_FRAME_BYTES) return fail(`frame of ${length} bytes is too large`);
      if (pending.length < offset + 4 + length) return;
      const mask = pending.subarray(offset, offset + 4);
      const payload = Buffer.from(pending.subarray(offset + 4, offset + 4 + length));
      for (let index = 0; index < payload.length; index += 1) payload[index]! ^= mask[index % 4]!;
      pending = pending.subarray(offset + 4 + length);
      options.onFrame({ fin: (first & 0x80) !== 0, opcode: first & 0x0f, payload });
    }
  };

  function fail(message: string): void {
    failed = true;
    pending = Buffer.alloc(0);
    options.onProtocolError(message);
  }
}
