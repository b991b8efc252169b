import { spawn, type ChildProcess } from 'node:child_process';
import { validateJSONRPCMessage, type JSONRPCMessage, type MCPTransport } from '@ai-sdk/mcp';

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
  /** Each stderr line, for debug logging. */
  onStderr?: (line: string) => void;
  /** A notification from the server (`notifications/tools/list_changed`), seen before the client. */
  onNotification?: (method: string) => void;
}

const STDERR_TAIL_CHARACTERS = 2000;
const KILL_GRACE_MS = 2000;

/**
 * MCP over stdio: newline-delimited JSON-RPC on the child's stdin/stdout. The AI SDK has one too,
 * but it inherits stderr and hides the process; this one keeps the tail of stderr and the exit
 * status, so "the server died" can say why, and tells the owner when the process is gone.
 */
export class StdioTransport implements MCPTransport {
  readonly supportsProtocolVersionDiscovery = true;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private stdoutBuffer = '';
  private stderrTail = '';
  private stderrLine = '';
  private closing = false;
  private exited = false;
  private exitInfo: ProcessExit | undefined;

  constructor(private readonly options: StdioTransportOptions) {}

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
      const child = spawn(this.options.command, this.options.args, {
        env: this.options.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(this.options.cwd === undefined ? {} : { cwd: this.options.cwd }),
        windowsHide: true,
      });
      this.child = child;
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.once('error', (error) => {
        if (!spawned) {
          this.exited = true;
          this.exitInfo = { code: null, signal: null, stderrTail: error.message, expected: this.closing };
          reject(new Error(`could not start ${this.options.command}: ${error.message}`));
          this.options.onExit?.(this.exitInfo);
          return;
        }
        this.onerror?.(error);
      });
      child.once('close', (code, signal) => this.handleExit(code, signal));
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => this.receive(chunk));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => this.receiveStderr(chunk));
      // Writing to a process that just died raises EPIPE here; the exit handler reports it.
      child.stdin?.on('error', () => {});
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exited || !stdin.writable) throw new Error('the MCP server process is not running');
    const line = `${JSON.stringify(message)}\n`;
    await new Promise<void>((resolve, reject) => {
      stdin.write(line, (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    const child = this.child;
    if (!child || this.exited) return;
    const gone = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin?.end();
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
    timer.unref();
    await gone;
    clearTimeout(timer);
  }

  private receive(chunk: string): void {
    this.stdoutBuffer += chunk;
    for (;;) {
      const newline = this.stdoutBuffer.indexOf('\n');
      if (newline < 0) break;
      const line = this.stdoutBuffer.slice(0, newline).replace(/\r$/, '');
      this.stdoutBuffer = this.stdoutBuffer.slice(newline + 1);
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = validateJSONRPCMessage(JSON.parse(line));
      } catch (error) {
        this.onerror?.(new Error(`the MCP server wrote something that is not JSON-RPC on stdout: ${line.slice(0, 200)}`, { cause: error }));
        continue;
      }
      if ('method' in message && !('id' in message)) this.options.onNotification?.(message.method);
      this.onmessage?.(message);
    }
  }

  private receiveStderr(chunk: string): void {
    this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARACTERS);
    if (!this.options.onStderr) return;
    this.stderrLine += chunk;
    const lines = this.stderrLine.split('\n');
    this.stderrLine = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') this.options.onStderr(line);
  }

  private handleExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitInfo = { code, signal, stderrTail: this.stderrTail.trim(), expected: this.closing };
    this.onclose?.();
    this.options.onExit?.(this.exitInfo);
  }
}
