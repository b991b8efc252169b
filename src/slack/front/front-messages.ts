import type { HttpReply } from '../../runtime/health-check.js';

/**
 * What the Slack front (the thread that serves HTTP: `slack-front-server.ts`) and the bot's thread
 * (`forwarded-receiver.ts`) tell each other. Bodies cross already verified and parsed.
 */
export type FrontToBot =
  /** Already acknowledged by the front (events, button clicks): only to be handled. */
  | { kind: 'acked'; body: Record<string, unknown>; retryNum?: number; retryReason?: string }
  /** Waits for the bot's `ack` (modal submissions, commands, option lists): `id` names the reply. */
  | { kind: 'request'; id: number; body: Record<string, unknown>; retryNum?: number; retryReason?: string }
  /** `GET /healthz` or `GET /metrics`, answered by the bot's thread (it has the store and the metrics). */
  | { kind: 'route'; id: number; path: string }
  /** The process is stopping: finish the running turns, then say `stopped`. */
  | { kind: 'stop' };

export type BotToFront =
  /** The bot's `ack` of request `id`: what Slack gets back (nothing, a string or JSON). */
  | { kind: 'ack'; id: number; response?: unknown }
  /** The bot's thread could not handle request `id` (no listener acked, or one threw first). */
  | { kind: 'failed'; id: number }
  | { kind: 'route-reply'; id: number; reply: HttpReply }
  /** The bot started (the front starts listening only then), or stopped after a `stop`. */
  | { kind: 'ready' }
  | { kind: 'stopped' }
  /** The bot's thread could not write its logs (`failure`: e.g. `EPIPE`): the process should stop. */
  | { kind: 'output-broken'; failure: string };

/** The two ends of a `MessagePort`, `Worker` or `parentPort`, as each side uses them. */
export interface FrontChannel<Incoming, Outgoing> {
  postMessage(message: Outgoing): void;
  on(event: 'message', listener: (message: Incoming) => void): unknown;
  off(event: 'message', listener: (message: Incoming) => void): unknown;
}
