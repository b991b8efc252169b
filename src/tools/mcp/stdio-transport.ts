import { spawn, type ChildProcess } from 'node:child_process';
import { validateJSONRPCMessage, type JSONRPCMessage, type MCPTransport } from '@ai-sdk/mcp';
import type { ProcessGroupGuard } from '../command/process-group-guard.js';
import { notWatched, spawnHeld } from '../command/held-spawn.js';
import { endProcessGroup, signalProcessGroup, USE_PROCESS_GROUP } from '../command/process-group.js';
import { createRedactor, type Redactor } from '../http/redact.js';

/** How a server process ended, for the notice in Slack and the log. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines the server wrote to stderr: usually why it failed. */
  stderrTail: string;
  /** True when we stopped it (close); false when it died on its own. */
  expected: boolean;
}

export interface StdioTransportOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Called once when the process is gone, whatever the reason. */
  onExit?: (exit: ProcessExit) => void;
  /** Each stderr line, redacted (see `redact`), for debug logging. */
  onStderr?: (line: string) => void;
  /**
   * Replaces the secrets the server may know in what this transport hands on of its output (stderr
   * lines, a stdout line that is not JSON-RPC). Applied before a line is cut, so a cut cannot leave
   * the first part of a secret. Default: nothing is replaced.
   */
  redact?: Redactor;
  /** A notification from the server (`notifications/tools/list_changed`), seen before the client. */
  onNotification?: (method: string) => void;
  /**
   * Something went wrong on the connection that does not end it: a line on stdout that is not
   * JSON-RPC (skipped), or a callback that threw, such as the client refusing a late answer to a
   * request it already gave up on. Nothing a server does may throw out of this transport: an
   * exception in a stream handler would be uncaught and end the whole bot.
   */
  onTransportError?: (error: Error) => void;
  /**
   * How long to wait for an answer to `server/discover` (the stateless protocol's probe) before
   * taking the server for one without discovery and initializing the classic way. Default 5 s.
   */
  discoveryTimeoutMs?: number;
  /** A longer line on stdout is dropped (and reported) instead of buffered. Default 64 Mi characters. */
  maxLineLength?: number;
  /**
   * Told the server's process group while it runs, so that it is killed if the bot process dies
   * without closing this transport (the group no longer gets the terminal's Ctrl-C, nor the bot's).
   * `start` resolves once `watch` settled: the server is not used before its guard holds it.
   */
  processGroups?: Pick<ProcessGroupGuard, 'watch' | 'unwatch'>;
}

const STDERR_TAIL_CHARACTERS = 2000;
/** Of a longer stderr line, only this much is kept (and logged, marked with "…"). */
const STDERR_LINE_CHARACTERS = 4096;
/** Of a stdout line that is not JSON-RPC, this much is quoted in the report. */
const QUOTED_LINE_CHARACTERS = 200;
const NO_SECRETS = createRedactor([]);
/** Between SIGTERM and SIGKILL to the server's process group, on close and after the server exits. */
const KILL_GRACE_MS = 2000;
/**
 * After the process exits, how long its pipes get to bring in what it wrote before it died. A helper
 * it started with its own stdio (Node's `stdio: 'inherit'`, Python's `Popen` without redirects)
 * holds them open after the server is gone; the server must not count as running until it lets go.
 */
const PIPE_DRAIN_AFTER_EXIT_MS = 1000;
/** `close` returns by then even if the process could not be seen to end (it would then be left to the guard). */
const CLOSE_TIMEOUT_MS = KILL_GRACE_MS + PIPE_DRAIN_AFTER_EXIT_MS + 1000;
export const DEFAULT_DISCOVERY_TIMEOUT_MS = 5000;
const DEFAULT_MAX_LINE_LENGTH = 64 * 1024 * 1024;
const DISCOVER_METHOD = 'server/discover';

/**
 * MCP over stdio: newline-delimited JSON-RPC on the child's stdin/stdout. The AI SDK has one too,
 * but it inherits stderr and hides the process; this one keeps the tail of stderr and the exit
 * status, so "the server died" can say why, and tells the owner when the process is gone.
 */
export class StdioTransport implements MCPTransport {
  readonly supportsProtocolVersionDiscovery = true;
  /**
   * The client's own probe timeout for transports that do not wait is 1 s: a server that takes
   * longer (most npx-started ones on a busy machine) then answers an id the client has forgotten.
   * So the client waits, and this transport bounds the wait itself (`discoveryTimeoutMs`).
   */
  readonly waitsForProtocolVersionDiscovery = true;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private stdoutBuffer = '';
  private stderrTail = '';
  private stderrLine = '';
  /**
   * The unfinished stderr line was longer than what is kept of it (`STDERR_LINE_CHARACTERS` and the
   * redactor's lookahead): the rest is dropped.
   */
  private stderrLineCut = false;
  private closing = false;
  /** Settled when the process exits: whether the bot had asked it to (`close`) by then. */
  private exitExpected: boolean | undefined;
  /** A write to the process's stdin failed (EPIPE): it had closed its input or exited. */
  private inputBroken = false;
  private exited = false;
  private exitInfo: ProcessExit | undefined;
  /** Ends the wait for the pipes once the process exited (see `PIPE_DRAIN_AFTER_EXIT_MS`). */
  private drainTimer: NodeJS.Timeout | undefined;
  /** Resolves once the process is gone and reported (`handleExit`). */
  private readonly gone: Promise<void>;
  private markGone: () => void = () => {};
  /** What is left of the process group is being stopped (once the server exited). */
  private groupEnding = false;
  /** Part of a too-long line is being thrown away, up to its end. */
  private discardingLine = false;
  /** Discovery requests still waiting for an answer, by id, with their deadline timers. */
  private readonly discoveries = new Map<string, NodeJS.Timeout>();
  /** Discovery requests answered by the deadline: the server's late answer is dropped. */
  private readonly abandonedDiscoveries = new Set<string>();

  private readonly redact: Redactor;

  constructor(private readonly options: StdioTransportOptions) {
    this.redact = options.redact ?? NO_SECRETS;
    this.gone = new Promise((resolve) => {
      this.markGone = resolve;
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the process ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.exitInfo;
  }

  /** Forgets stderr so far: once the server works, its start-up chatter does not explain a later crash. */
  clearStderr(): void {
    this.stderrTail = '';
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('already started'));
    return new Promise((resolve, reject) => {
      const spawnOptions = {
        env: this.options.env,
        stdio: ['pipe', 'pipe', 'pipe'] as ['pipe', 'pipe', 'pipe'],
        ...(this.options.cwd === undefined ? {} : { cwd: this.options.cwd }),
        // A group of its own, so that stopping the server stops what it started: the real server of
        // a wrapper (`sh -c 'node server.mjs'`), the helpers that hold its pipes.
        detached: USE_PROCESS_GROUP,
        windowsHide: true,
      };
      const { processGroups } = this.options;
      // Held while its group is not watched yet: a bot killed before the watchdog held it leaves no
      // server running (holding credentials), as the held process exits when its pipe from the bot closes.
      const { child, release } = processGroups
        ? spawnHeld(this.options.command, this.options.args, spawnOptions)
        : { child: spawn(this.options.command, this.options.args, spawnOptions), release: () => {} };
      this.child = child;
      // At once, not on 'spawn' (a tick later): the sooner the watchdog holds the group, the sooner
      // the server runs. No pid: the spawn failed ('error' follows).
      const guarded = child.pid === undefined ? undefined : processGroups?.watch(child.pid);
      const running = (guarded ?? Promise.resolve(true)).then((held) => {
        if (this.exited || this.closing) return true;
        if (held) {
          release();
          return true;
        }
        // No watchdog holds its group: never run unwatched (a bot killed then would leave it
        // running, holding credentials). The stand-in goes; the start's error says why.
        this.exitExpected = true;
        if (child.pid !== undefined) signalProcessGroup(child.pid, 'SIGKILL');
        return false;
      });
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        void running.then((held) => (held ? resolve() : reject(new Error(notWatched(this.options.command)))));
      });
      // `on`, not `once`: a second 'error' without a listener would be thrown.
      child.on('error', (error) => {
        if (!spawned) {
          this.exited = true;
          this.exitInfo = { code: null, signal: null, stderrTail: error.message, expected: this.closing };
          reject(new Error(`could not start ${this.options.command}: ${error.message}`));
          const exit = this.exitInfo;
          this.guarded('reporting the process exit', () => this.options.onExit?.(exit));
          return;
        }
        this.fault(error);
      });
      // Every handler below is guarded: what a server writes, and what the client makes of it, must
      // never throw out of a stream event (that would be an uncaught exception: the bot would exit).
      // 'close' waits for every process holding the pipes; 'exit' is the server's own end, after
      // which its last lines get a moment to arrive.
      child.once('exit', (code, signal) => this.guarded('handling the process exit', () => this.drainAfterExit(code, signal)));
      child.once('close', (code, signal) => this.guarded('handling the process exit', () => this.handleExit(code, signal)));
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => this.guarded('reading stdout', () => this.receive(chunk)));
      child.stdout?.on('error', (error) => this.fault(error));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => this.guarded('reading stderr', () => this.receiveStderr(chunk)));
      child.stderr?.on('error', (error) => this.fault(error));
      // Writing to a process that just died raises EPIPE here; the exit handler reports it. The
      // process was going (or had closed its input) before the bot asked it to stop: see `close`.
      child.stdin?.on('error', () => {
        this.inputBroken = true;
      });
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exited || !stdin.writable) throw new Error('the MCP server process is not running');
    const line = `${JSON.stringify(message)}\n`;
    // Watched from before it is written, so even an instant answer finds its deadline to clear.
    const discoveryId = 'method' in message && message.method === DISCOVER_METHOD && 'id' in message ? message.id : undefined;
    if (discoveryId !== undefined) this.watchDiscovery(discoveryId);
    try {
      await new Promise<void>((resolve, reject) => {
        stdin.write(line, (error) => (error ? reject(error) : resolve()));
      });
    } catch (error) {
      if (discoveryId !== undefined) this.forgetDiscovery(String(discoveryId));
      throw error;
    }
  }

  async close(): Promise<void> {
    // A connect that failed on a write to a dead process closes the transport before the exit may
    // even be seen: that exit is the server's own, and must still say why it ended.
    if (this.inputBroken) this.exitExpected ??= false;
    this.closing = true;
    this.clearDiscoveries();
    const child = this.child;
    const pid = child?.pid;
    if (!child || pid === undefined || this.exited) return;
    child.stdin?.end();
    // The whole group: a wrapper script does not pass SIGTERM on to the server it started.
    signalProcessGroup(pid, 'SIGTERM');
    const kill = setTimeout(() => signalProcessGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
    let giveUp: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      giveUp = setTimeout(resolve, CLOSE_TIMEOUT_MS);
    });
    // Bounded: the bot's stop must not hang on a process that cannot be seen to end.
    await Promise.race([this.gone, deadline]);
    clearTimeout(kill);
    clearTimeout(giveUp);
  }

  private receive(chunk: string): void {
    const maxLineLength = this.options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
    // What was buffered before this chunk holds no newline: search only the new part.
    let searchFrom = this.stdoutBuffer.length;
    this.stdoutBuffer += chunk;
    for (;;) {
      const newline = this.stdoutBuffer.indexOf('\n', searchFrom);
      if (newline < 0) {
        if (this.discardingLine || this.stdoutBuffer.length > maxLineLength) {
          if (!this.discardingLine) this.fault(new Error(`the MCP server wrote a line longer than ${maxLineLength} characters on stdout; skipped`));
          this.discardingLine = true;
          this.stdoutBuffer = '';
        }
        break;
      }
      const line = this.stdoutBuffer.slice(0, newline).replace(/\r$/, '');
      this.stdoutBuffer = this.stdoutBuffer.slice(newline + 1);
      searchFrom = 0;
      if (this.discardingLine) {
        this.discardingLine = false;
        continue;
      }
      if (line.length > maxLineLength) {
        this.fault(new Error(`the MCP server wrote a line longer than ${maxLineLength} characters on stdout; skipped`));
        continue;
      }
      if (line.trim() === '') continue;
      // One line at a time, each on its own: a bad line or a throwing callback costs that line only.
      this.guarded('handling a message from the server', () => this.deliver(line));
    }
  }

  private deliver(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = validateJSONRPCMessage(JSON.parse(line));
    } catch {
      // No cause: JSON.parse quotes a piece of the line in its message, cut wherever it likes.
      this.fault(new Error(`the MCP server wrote something that is not JSON-RPC on stdout; skipped: ${this.quoted(line)}`));
      return;
    }
    if (!('method' in message) && 'id' in message && message.id !== undefined) {
      const id = String(message.id);
      if (this.abandonedDiscoveries.delete(id)) return;
      this.forgetDiscovery(id);
    }
    if ('method' in message && !('id' in message)) {
      const { method } = message;
      this.guarded('handling a notification', () => this.options.onNotification?.(method));
    }
    this.onmessage?.(message);
  }

  /**
   * The client waits for the answer to `server/discover` (see `waitsForProtocolVersionDiscovery`);
   * a server without discovery that ignores unknown methods would never answer. After the deadline
   * the client is given "Method not found" in the server's name, so it initializes the classic way,
   * and the server's late answer, if any, is dropped.
   */
  private watchDiscovery(rawId: string | number): void {
    const id = String(rawId);
    const timeoutMs = this.options.discoveryTimeoutMs ?? DEFAULT_DISCOVERY_TIMEOUT_MS;
    const timer = setTimeout(() => {
      this.discoveries.delete(id);
      if (this.exited) return;
      this.abandonedDiscoveries.add(id);
      this.guarded('ending protocol discovery', () =>
        this.onmessage?.({ jsonrpc: '2.0', id: rawId, error: { code: -32601, message: `no answer to ${DISCOVER_METHOD} within ${timeoutMs} ms` } }),
      );
    }, timeoutMs);
    timer.unref();
    this.discoveries.set(id, timer);
  }

  private forgetDiscovery(id: string): void {
    clearTimeout(this.discoveries.get(id));
    this.discoveries.delete(id);
  }

  private clearDiscoveries(): void {
    for (const timer of this.discoveries.values()) clearTimeout(timer);
    this.discoveries.clear();
  }

  /** The start of a line, redacted before it is cut (the redactor reads past the cut to see a secret whole). */
  private quoted(line: string): string {
    if (line.length <= QUOTED_LINE_CHARACTERS) return this.redact(line);
    return `${this.redact.head(line.slice(0, QUOTED_LINE_CHARACTERS + this.redact.lookaheadBytes), QUOTED_LINE_CHARACTERS)}…`;
  }

  /** Runs a piece of event handling; whatever it throws is reported, never let out. */
  private guarded(what: string, work: () => void): void {
    try {
      work();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.fault(new Error(`error while ${what}: ${message}`, { cause: error }));
    }
  }

  /** Reports a problem that does not end the connection; a reporter that throws is ignored. */
  private fault(error: Error): void {
    try {
      if (this.options.onTransportError) this.options.onTransportError(error);
      else this.onerror?.(error);
    } catch {
      // Nowhere left to report it; the connection goes on.
    }
  }

  /**
   * Each chunk is searched once, on its own: what was kept of the unfinished line holds no line end.
   * `\r` ends a line too, since progress bars redraw with it and never write `\n`; and an unfinished
   * line keeps only its first `STDERR_LINE_CHARACTERS` (and the redactor's lookahead past them, so a
   * secret across the cut is redacted whole), so a server that never ends one costs a few KB, not
   * all it wrote (re-split on every chunk, that was also quadratic time).
   */
  private receiveStderr(chunk: string): void {
    this.stderrTail = (this.stderrTail + chunk.slice(-STDERR_TAIL_CHARACTERS)).slice(-STDERR_TAIL_CHARACTERS);
    if (!this.options.onStderr) return;
    const lineEnds = /[\r\n]/g;
    let start = 0;
    for (let found = lineEnds.exec(chunk); found; found = lineEnds.exec(chunk)) {
      this.keepStderr(chunk, start, found.index);
      const kept = this.stderrLine;
      const cut = this.stderrLineCut || kept.length > STDERR_LINE_CHARACTERS;
      this.stderrLine = '';
      this.stderrLineCut = false;
      start = found.index + 1;
      if (kept.trim() === '') continue;
      this.guarded('handling stderr', () => this.options.onStderr?.(cut ? `${this.redact.head(kept, STDERR_LINE_CHARACTERS)}…` : this.redact(kept)));
    }
    this.keepStderr(chunk, start, chunk.length);
  }

  /** Adds `chunk[start, end)` to the unfinished stderr line, up to its cap and the redactor's lookahead. */
  private keepStderr(chunk: string, start: number, end: number): void {
    // Lookahead in UTF-8 bytes is at least as many UTF-16 characters.
    const room = STDERR_LINE_CHARACTERS + this.redact.lookaheadBytes - this.stderrLine.length;
    if (end - start > room) this.stderrLineCut = true;
    if (room > 0) this.stderrLine += chunk.slice(start, Math.min(end, start + room));
  }

  /**
   * The process exited: what it wrote before is read until its pipes close, or for
   * `PIPE_DRAIN_AFTER_EXIT_MS` if a process it started still holds them. Then it is gone: our ends
   * of the pipes are closed, and the client fails what still waits for an answer.
   */
  private drainAfterExit(code: number | null, signal: NodeJS.Signals | null): void {
    // Whether the bot asked for this exit is settled now: a close() during the drain (a connect
    // that failed on a write to the dead process) did not cause it, and must not hide why it ended.
    this.exitExpected ??= this.closing;
    this.endGroup();
    if (this.exited) return;
    this.drainTimer = setTimeout(() => {
      this.guarded('handling the process exit', () => {
        const child = this.child;
        child?.stdin?.destroy();
        child?.stdout?.destroy();
        child?.stderr?.destroy();
        this.handleExit(code, signal);
      });
    }, PIPE_DRAIN_AFTER_EXIT_MS);
  }

  /**
   * The server exited: what it started in its group goes too (SIGTERM, then SIGKILL), or every
   * reconnect would leave another helper behind. The guard keeps the group until it is empty.
   */
  private endGroup(): void {
    const pid = this.child?.pid;
    if (pid === undefined || this.groupEnding) return;
    this.groupEnding = true;
    endProcessGroup({ pid, graceMs: KILL_GRACE_MS, onGone: () => this.options.processGroups?.unwatch(pid) });
  }

  private handleExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    clearTimeout(this.drainTimer);
    this.endGroup();
    this.exitInfo = { code, signal, stderrTail: this.stderrTail.trim(), expected: this.exitExpected ?? this.closing };
    this.clearDiscoveries();
    const exit = this.exitInfo;
    this.guarded('closing the client', () => this.onclose?.());
    this.guarded('reporting the process exit', () => this.options.onExit?.(exit));
    this.markGone();
  }
}

