import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pairEnvironment, usePairWorld } from './bot-pair.js';
import { freePort, startChildBot, stopChildBot } from './child-bot.js';
import { recordingToolsYaml, waitFor } from './harness.js';

/**
 * Review (Slack front): PORT is public (Slack posts to it from the internet). Anyone can open a
 * connection to it and start a POST /slack/events whose body never finishes: no signature is needed
 * to get that far (the body is read before it is verified). On SIGTERM the front awaits
 * `server.close()` before it tells the bot's thread to stop; Node's `close()` waits for every
 * connection with a request in flight, and stops the `requestTimeout` checks as it starts, so with
 * the server's socket timeout at 0 that one connection holds the stop forever. The bot's thread is
 * never told to stop (it goes on taking threads from Redis and starting turns), and the process
 * never exits on its own: the orchestrator SIGKILLs it at the end of its grace, killing any approved
 * command then running ("interrupted, never run again"). Inline (Bolt's own receiver) the same
 * `close()` hangs `app.stop()`.
 */
const world = usePairWorld();

/** A request that sends its headers and a little of its body, then nothing: no signature at all. */
async function stalledPost(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  socket.write('POST /slack/events HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"type":');
  return socket;
}

describe.each(['thread', 'inline'])('COUNTERSIGN_SLACK_FRONT=%s: SIGTERM while an unsigned request is stalled on the public port', (front) => {
  it('still stops: the process exits 0 within the stop grace', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-stalled-'));
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(join(directory, 'invocations.log')));
    const port = await freePort();
    const bot = startChildBot(pairEnvironment({ ...world, configPath, port, extra: { COUNTERSIGN_SLACK_FRONT: front } }), { mainJs: world.mainJs });
    let socket: Socket | undefined;
    try {
      await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: `start-up; output so far:\n${bot.output()}` });
      socket = await stalledPost(port);
      // The server has the request (a health check on another connection is answered, so it is serving).
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      // SIGTERM, up to 20 s for the process to exit on its own, then SIGKILL (exit code null).
      const code = await stopChildBot(bot);
      socket?.destroy();
      expect(code, `the process did not exit after SIGTERM; its log ends:\n${bot.output().slice(-1500)}`).toBe(0);
    }
  }, 90_000);
});
