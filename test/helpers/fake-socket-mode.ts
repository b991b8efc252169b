import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { createConditionWaiters } from './condition-waiters.js';
import { closePayload, createFrameReader, encodeFrame, handshakeResponse, OPCODE, type WebSocketFrame } from './fake-socket-mode-frames.js';
import { closeServer, listenOnLoopback } from './loopback-http.js';
import { API_APP_ID } from './slack-fake-ids.js';

/**
 * A loopback stand-in for Slack's Socket Mode WebSocket endpoint (the `url` that
 * `apps.connections.open` returns), driven by the real @slack/socket-mode client inside Bolt:
 *
 *   fakeSlack.setMethodHandler('apps.connections.open', () => ({ ok: true, url: socketMode.url }));
 *
 * Like Slack it greets each connection with `hello`, answers pings, delivers envelopes
 * (`events_api`, `interactive`, `slash_commands`) and records the client's acks
 * (`{ envelope_id, payload }`).
 */

export type EnvelopeType = 'events_api' | 'interactive' | 'slash_commands';

export interface SocketModeEnvelope {
  envelope_id: string;
  type: EnvelopeType;
  payload: object;
  accepts_response_payload: boolean;
  retry_attempt?: number;
  retry_reason?: string;
}

export interface SocketModeAck {
  envelope_id: string;
  payload?: unknown;
}

export interface DeliveryResult {
  acked: boolean;
  envelopeId: string;
  /** What the client put in its ack (Bolt sends `{}` for a bare `ack()`). */
  ackPayload?: unknown;
}

export interface DeliveryOptions {
  /** How long to wait for the ack; Slack itself gives up (and may retry) after about 3 s. */
  ackTimeoutMs?: number;
}

export interface FakeSocketMode {
  /** The WebSocket URL to answer `apps.connections.open` with. */
  url: string;
  appId: string;
  /** Resolves once a client is connected and has been sent `hello`. */
  connected(options?: { timeoutMs?: number }): Promise<void>;
  /** Resolves once no connection is open any more (e.g. after the bot stopped). */
  disconnected(options?: { timeoutMs?: number }): Promise<void>;
  /** Connections currently open (after the handshake). */
  openConnections(): number;
  /** Every connection accepted so far, open or not; more than one means the client reconnected. */
  connectionsAccepted(): number;
  /**
   * Delivers an Events API body (e.g. `appMentionEnvelope(...)`) as an `events_api` envelope.
   * `retryAttempt` ≥ 1 marks a redelivery, as Slack does when an earlier one was not acked.
   */
  sendEvent(envelope: object, options?: DeliveryOptions & { retryAttempt?: number; retryReason?: string }): Promise<DeliveryResult>;
  /** Delivers an interactivity payload (block_actions, view_submission, …) as an `interactive` envelope. */
  sendInteraction(payload: object, options?: DeliveryOptions): Promise<DeliveryResult>;
  /** Delivers a slash command's form fields (as an object) as a `slash_commands` envelope. */
  sendSlashCommand(payload: object, options?: DeliveryOptions): Promise<DeliveryResult>;
  /** Sends a WebSocket ping the way Slack's server does; resolves true once the client pongs. */
  ping(options?: { timeoutMs?: number }): Promise<boolean>;
  /** Slack's `{type:'disconnect'}` message (e.g. before recycling a server); the client then closes and reconnects. */
  sendDisconnect(reason?: 'refresh_requested' | 'warning' | 'link_disabled'): void;
  /** Every envelope sent, in order. */
  sent: SocketModeEnvelope[];
  /** Every ack received, in order. */
  acks: SocketModeAck[];
  /** Close codes of the close frames the client sent (1000 = a normal shutdown). */
  clientCloseCodes: number[];
  /** Frames or messages a real Slack would reject (unmasked frames, non-JSON text, …). */
  protocolErrors: string[];
  close(): Promise<void>;
}

interface Connection {
  id: number;
  socket: Socket;
  open: boolean;
  closeSent: boolean;
  fragments: Buffer[];
  fragmentOpcode: number | undefined;
  ended: Promise<void>;
}

const DEFAULT_ACK_TIMEOUT_MS = 3_000;
const CLOSE_GRACE_MS = 1_000;

export async function startFakeSocketMode(options: { appId?: string } = {}): Promise<FakeSocketMode> {
  const appId = options.appId ?? API_APP_ID;
  const connections = new Set<Connection>();
  const waiters = createConditionWaiters();
  const sent: SocketModeEnvelope[] = [];
  const acks: SocketModeAck[] = [];
  const protocolErrors: string[] = [];
  const clientCloseCodes: number[] = [];
  const pongs: string[] = [];
  let accepted = 0;
  let pingSequence = 0;

  const loopback = await listenOnLoopback({
    listener: (_request, response) => {
      response.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' });
      response.end('fake-socket-mode: this endpoint only speaks WebSocket');
    },
  });
  loopback.server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => upgrade(request, socket, head));
  const ticket = randomUUID();
  const url = `ws://127.0.0.1:${loopback.port}/link/?ticket=${ticket}&app_id=${appId}`;

  function upgrade(request: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', () => {});
    const key = request.headers['sec-websocket-key'];
    const isWebSocket = request.headers.upgrade?.toLowerCase() === 'websocket' && request.headers['sec-websocket-version'] === '13';
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    if (!isWebSocket || typeof key !== 'string' || !path.startsWith('/link')) {
      protocolErrors.push(`rejected handshake for ${request.url ?? '?'} (upgrade=${request.headers.upgrade ?? '-'})`);
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    socket.setNoDelay(true);
    socket.write(handshakeResponse(key));
    accepted += 1;
    const connection: Connection = {
      id: accepted,
      socket,
      open: true,
      closeSent: false,
      fragments: [],
      fragmentOpcode: undefined,
      ended: new Promise((resolve) => socket.once('close', () => resolve())),
    };
    connections.add(connection);
    socket.once('close', () => {
      connection.open = false;
      connections.delete(connection);
      waiters.recheck();
    });
    const read = createFrameReader({
      onFrame: (frame) => onFrame(connection, frame),
      onProtocolError: (message) => {
        protocolErrors.push(message);
        closeConnection(connection, 1002, message);
      },
    });
    socket.on('data', read);
    if (head.length > 0) read(head);

    sendJson(connection, {
      type: 'hello',
      num_connections: [...connections].filter((other) => other.open).length,
      debug_info: { host: 'applink-fake-1', build_number: 1, approximate_connection_time: 18_060 },
      connection_info: { app_id: appId },
    });
    waiters.recheck();
  }

  function onFrame(connection: Connection, frame: WebSocketFrame): void {
    switch (frame.opcode) {
      case OPCODE.ping:
        if (connection.open && !connection.closeSent) connection.socket.write(encodeFrame(OPCODE.pong, frame.payload));
        return;
      case OPCODE.pong:
        pongs.push(frame.payload.toString('utf8'));
        waiters.recheck();
        return;
      case OPCODE.close: {
        const code = frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : 1005;
        clientCloseCodes.push(code);
        // Echo the close (RFC 6455 §5.5.1), then end the TCP connection: the server closes first.
        if (!connection.closeSent) {
          connection.closeSent = true;
          connection.socket.write(encodeFrame(OPCODE.close, code === 1005 ? Buffer.alloc(0) : closePayload(code)));
        }
        connection.open = false;
        connection.socket.end();
        waiters.recheck();
        return;
      }
      case OPCODE.text:
      case OPCODE.binary:
      case OPCODE.continuation: {
        if (frame.opcode !== OPCODE.continuation) {
          connection.fragments = [];
          connection.fragmentOpcode = frame.opcode;
        }
        connection.fragments.push(frame.payload);
        if (!frame.fin) return;
        const message = Buffer.concat(connection.fragments);
        const opcode = connection.fragmentOpcode;
        connection.fragments = [];
        connection.fragmentOpcode = undefined;
        if (opcode !== OPCODE.text) {
          protocolErrors.push('binary message from the client');
          return;
        }
        onMessage(message.toString('utf8'));
        return;
      }
      default:
        protocolErrors.push(`unknown opcode ${frame.opcode}`);
        closeConnection(connection, 1002, 'unknown opcode');
    }
  }

  function onMessage(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      protocolErrors.push(`non-JSON message from the client: ${text.slice(0, 200)}`);
      return;
    }
    const envelopeId = (parsed as { envelope_id?: unknown } | null)?.envelope_id;
    if (typeof envelopeId !== 'string') {
      protocolErrors.push(`message without envelope_id from the client: ${text.slice(0, 200)}`);
      return;
    }
    const { payload } = parsed as { payload?: unknown };
    acks.push(payload === undefined ? { envelope_id: envelopeId } : { envelope_id: envelopeId, payload });
    waiters.recheck();
  }

  function sendJson(connection: Connection, message: object): void {
    connection.socket.write(encodeFrame(OPCODE.text, JSON.stringify(message)));
  }

  function closeConnection(connection: Connection, code: number, reason: string): void {
    if (!connection.closeSent && connection.open) {
      connection.closeSent = true;
      connection.socket.write(encodeFrame(OPCODE.close, closePayload(code, reason.slice(0, 120))));
    }
    connection.open = false;
  }

  /** Slack delivers each envelope on one of the app's connections; the newest is the one that is surely alive. */
  function activeConnection(): Connection | undefined {
    return [...connections].filter((connection) => connection.open && !connection.closeSent).at(-1);
  }

  function connected(timeoutMs = 5_000): Promise<void> {
    return waiters
      .waitFor({
        check: () => (activeConnection() ? true : undefined),
        timeoutMs,
        describeTimeout: (ms) =>
          `fake-socket-mode: no Socket Mode client connected within ${ms} ms (accepted ${accepted} connection(s)` +
          `${protocolErrors.length > 0 ? `; problems: ${protocolErrors.join('; ')}` : ''}). ` +
          'Did apps.connections.open answer with this fake\'s url?',
      })
      .then(() => undefined);
  }

  async function deliver(
    envelope: Omit<SocketModeEnvelope, 'envelope_id'>,
    options: DeliveryOptions = {},
  ): Promise<DeliveryResult> {
    const ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
    await connected(ackTimeoutMs);
    const connection = activeConnection();
    const envelopeId = randomUUID();
    if (!connection) return { acked: false, envelopeId };
    const full: SocketModeEnvelope = { envelope_id: envelopeId, ...envelope };
    sent.push(full);
    sendJson(connection, full);
    try {
      const ack = await waiters.waitFor({
        check: () => acks.find((candidate) => candidate.envelope_id === envelopeId),
        timeoutMs: ackTimeoutMs,
        describeTimeout: () => 'not acked',
      });
      return 'payload' in ack ? { acked: true, envelopeId, ackPayload: ack.payload } : { acked: true, envelopeId };
    } catch {
      return { acked: false, envelopeId };
    }
  }

  return {
    url,
    appId,
    connected: (waitOptions) => connected(waitOptions?.timeoutMs),
    disconnected: (waitOptions) =>
      waiters
        .waitFor({
          check: () => (connections.size === 0 ? true : undefined),
          timeoutMs: waitOptions?.timeoutMs ?? 5_000,
          describeTimeout: (ms) => `fake-socket-mode: ${connections.size} connection(s) still open after ${ms} ms`,
        })
        .then(() => undefined),
    openConnections: () => [...connections].filter((connection) => connection.open).length,
    connectionsAccepted: () => accepted,
    sendEvent(envelope, eventOptions = {}) {
      const retryAttempt = eventOptions.retryAttempt ?? 0;
      return deliver(
        {
          type: 'events_api',
          payload: envelope,
          accepts_response_payload: false,
          // Slack sends these on every delivery: 0 and '' the first time.
          retry_attempt: retryAttempt,
          retry_reason: retryAttempt > 0 ? (eventOptions.retryReason ?? 'timeout') : '',
        },
        eventOptions,
      );
    },
    sendInteraction(payload, deliveryOptions) {
      const type = (payload as { type?: unknown }).type;
      // Only these interactions can be answered through the ack (errors, update, options list).
      const acceptsResponsePayload = type === 'view_submission' || type === 'block_suggestion';
      return deliver({ type: 'interactive', payload, accepts_response_payload: acceptsResponsePayload }, deliveryOptions);
    },
    sendSlashCommand(payload, deliveryOptions) {
      return deliver({ type: 'slash_commands', payload, accepts_response_payload: true }, deliveryOptions);
    },
    async ping(pingOptions) {
      const connection = activeConnection();
      if (!connection) return false;
      pingSequence += 1;
      const data = `fake-slack-ping-${pingSequence}`;
      connection.socket.write(encodeFrame(OPCODE.ping, data));
      try {
        await waiters.waitFor({
          check: () => (pongs.includes(data) ? true : undefined),
          timeoutMs: pingOptions?.timeoutMs ?? 2_000,
          describeTimeout: () => 'no pong',
        });
        return true;
      } catch {
        return false;
      }
    },
    sendDisconnect(reason = 'refresh_requested') {
      for (const connection of connections) {
        if (connection.open && !connection.closeSent) sendJson(connection, { type: 'disconnect', reason, debug_info: { host: 'applink-fake-1' } });
      }
    },
    sent,
    acks,
    clientCloseCodes,
    protocolErrors,
    async close() {
      waiters.cancelAll('fake-socket-mode: closed while waiting');
      const ending = [...connections].map(async (connection) => {
        closeConnection(connection, 1001, 'going away');
        const timer = setTimeout(() => connection.socket.destroy(), CLOSE_GRACE_MS);
        await connection.ended;
        clearTimeout(timer);
      });
      await Promise.all(ending);
      await closeServer(loopback.server);
    },
  };
}
