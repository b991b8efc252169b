import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServerHandle {
  url: string;
  port: number;
  /** Where a `persist: true` server keeps its append-only file; undefined otherwise. */
  dataDirectory: string | undefined;
  /** Stops the server for good (and deletes its data directory when it persisted); SIGKILL is a crash. */
  stop(options?: { signal?: 'SIGTERM' | 'SIGKILL' }): Promise<void>;
  /**
   * Stops and starts on the same port. The data is gone, unless the server was started with
   * `persist: true`. `whileDown` runs between the stop and the start (the server is unreachable).
   * `signal: 'SIGKILL'` is a crash: a server configured to `save` writes no snapshot on the way down.
   */
  restart(options?: { whileDown?: () => Promise<void>; signal?: 'SIGTERM' | 'SIGKILL' }): Promise<void>;
}

export interface StartRedisServerOptions {
  binary?: string;
  /**
   * Keep the data across `restart()`, like a production Redis: an append-only file fsynced on every
   * write, in a private temporary directory that `stop()` deletes. Default false: nothing is written.
   */
  persist?: boolean;
  /** Before the usual arguments: a config file and `--sentinel` for a sentinel. */
  leadingArguments?: string[];
  /** After the usual arguments (later ones win): `--cluster-enabled yes`, a replica's `--replicaof`. */
  extraArguments?: string[];
  /** Serve TLS only (no plain port) with this certificate; clients are not asked for one. */
  tls?: RedisTlsFiles;
}

export interface RedisTlsFiles {
  certFile: string;
  keyFile: string;
  caFile: string;
}

const DEFAULT_REDIS_SERVER_BINARY = 'redis-server';
const STARTUP_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const OUTPUT_TAIL_CHARACTERS = 2_000;

/** Spawns a throwaway redis-server on a free loopback port and waits until it answers PING. */
export async function startRedisServer(options: StartRedisServerOptions = {}): Promise<RedisServerHandle> {
  const binary = options.binary ?? process.env.REDIS_SERVER_BIN ?? DEFAULT_REDIS_SERVER_BINARY;
  const dataDirectory = options.persist ? mkdtempSync(join(tmpdir(), 'countersign-redis-')) : undefined;
  const commandLine = { leadingArguments: options.leadingArguments ?? [], extraArguments: options.extraArguments ?? [], tls: options.tls };
  const removeData = () => {
    if (dataDirectory !== undefined) rmSync(dataDirectory, { recursive: true, force: true });
  };
  // An interrupted run must not leave the data directory behind either.
  if (dataDirectory !== undefined) process.once('exit', removeData);
  let running: RunningRedis;
  let port: number;
  try {
    ({ port, running } = await spawnOnFreePort({ binary, dataDirectory, ...commandLine }));
  } catch (error) {
    process.off('exit', removeData);
    removeData();
    throw error;
  }

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dataDirectory,
    async stop(stopOptions = {}) {
      await stopRedis(running, stopOptions.signal);
      process.off('exit', removeData);
      removeData();
    },
    async restart(restartOptions = {}) {
      await stopRedis(running, restartOptions.signal);
      try {
        await restartOptions.whileDown?.();
      } finally {
        running = await spawnRedis({ binary, port, dataDirectory, ...commandLine });
      }
    },
  };
}

const PORT_ATTEMPTS = 3;

/** The probed port can be taken before redis binds it, so a failed bind retries on another one. */
type SpawnOptions = { binary: string; dataDirectory: string | undefined; leadingArguments: string[]; extraArguments: string[]; tls: RedisTlsFiles | undefined };

async function spawnOnFreePort(options: SpawnOptions): Promise<{ port: number; running: RunningRedis }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt += 1) {
    const port = await findFreePort();
    try {
      return { port, running: await spawnRedis({ ...options, port }) };
    } catch (error) {
      if (error instanceof RedisNotInstalledError) throw error;
      lastError = error;
    }
  }
  throw lastError;
}

class RedisNotInstalledError extends Error {}

interface RunningRedis {
  child: ChildProcess;
  exited: Promise<void>;
}

async function spawnRedis(options: SpawnOptions & { port: number }): Promise<RunningRedis> {
  // By default no RDB snapshots or AOF: a restart starts empty and nothing is written. Persisting
  // servers write an AOF (fsynced per write) only into their own directory, and load it on restart.
  const persistence =
    options.dataDirectory === undefined
      ? ['--appendonly', 'no', '--dir', tmpdir()]
      : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.dataDirectory];
  const child = spawn(
    options.binary,
    [...options.leadingArguments, ...listening(options), '--bind', '127.0.0.1', '--save', '', ...persistence, '--loglevel', 'warning', ...options.extraArguments],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARACTERS);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const killOnExit = () => child.kill('SIGKILL');
  // A crashed or interrupted test run must not leave redis-server processes behind.
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      process.off('exit', killOnExit);
      resolve();
    });
  });
  const spawnFailure = new Promise<never>((_, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      process.off('exit', killOnExit);
      reject(
        error.code === 'ENOENT'
          ? new RedisNotInstalledError(`redis-server is not installed (could not run "${options.binary}"). Install it, set REDIS_SERVER_BIN, or set REDIS_URL to an existing server.`)
          : error,
      );
    });
    exited.then(() => reject(new Error(`redis-server exited during startup on port ${options.port}:\n${output}`)));
  });
  // After a successful start, the eventual exit must not surface as an unhandled rejection.
  spawnFailure.catch(() => undefined);
  const isAlive = () => child.exitCode === null && child.signalCode === null && child.pid !== undefined;
  try {
    const answered = await Promise.race([waitForPing({ port: options.port, tls: options.tls !== undefined, isAlive }), spawnFailure]);
    if (!answered && !isAlive()) await spawnFailure;
    if (!answered) throw new Error(`redis-server did not answer PING on 127.0.0.1:${options.port} within ${STARTUP_TIMEOUT_MS} ms:\n${output}`);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { child, exited };
}

async function stopRedis(running: RunningRedis, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return;
  running.child.kill(signal);
  const timer = setTimeout(() => running.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await running.exited;
  clearTimeout(timer);
}

/** Polls until PING answers (true), the deadline passes or the process is gone (false). */
function listening(options: SpawnOptions & { port: number }): string[] {
  if (options.tls === undefined) return ['--port', String(options.port)];
  const { certFile, keyFile, caFile } = options.tls;
  return ['--port', '0', '--tls-port', String(options.port), '--tls-cert-file', certFile, '--tls-key-file', keyFile, '--tls-ca-cert-file', caFile, '--tls-auth-clients', 'no'];
}

async function waitForPing(options: { port: number; tls: boolean; isAlive: () => boolean }): Promise<boolean> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline && options.isAlive()) {
    if (await answersPing(options)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** A raw RESP PING, so startup checks need no client library and log no reconnect noise. */
function answersPing(options: { port: number; tls: boolean }): Promise<boolean> {
  return new Promise((resolve) => {
    // Only whether it answers matters here, so the test certificate is not checked.
    const socket = options.tls ? connectTls({ host: '127.0.0.1', port: options.port, rejectUnauthorized: false }) : createConnection({ host: '127.0.0.1', port: options.port });
    let reply = '';
    const finish = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once(options.tls ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      // A server that requires a login (ACL) answers too: it is up.
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG') || reply.startsWith('-NOAUTH'));
    });
  });
}

async function findFreePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
