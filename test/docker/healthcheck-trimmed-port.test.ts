import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEnvironment } from '../../src/config/environment.js';
import { freePort } from '../e2e/child-bot.js';

/**
 * The image's HEALTHCHECK builds its URL from the raw `process.env.PORT`, while the bot reads PORT through
 * parseEnvironment, which trims it (README "Environment": values are trimmed, blank ones count as unset).
 * `docker run --env-file .env` (README "Deploy with Docker") keeps a value's trailing spaces, so `PORT=8080 `
 * in the .env gives a bot that listens on 8080 and is healthy, and a HEALTHCHECK that fetches
 * `http://127.0.0.1:8080 /healthz`, an invalid URL: the container is reported unhealthy for good (Swarm or an
 * autoheal restarts it over and over). Likewise `PORT= ` (a blank value): the bot takes 3000, the check ' '.
 */
const root = join(import.meta.dirname, '..', '..');

/** The HEALTHCHECK's command, as the Dockerfile writes it (shell form: run with /bin/sh -c). */
function healthcheckCommand(): string {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const match = /^HEALTHCHECK\b.*?\bCMD\s+(.+)$/m.exec(dockerfile);
  if (!match?.[1]) throw new Error('no HEALTHCHECK ... CMD in the Dockerfile');
  return match[1];
}

/** Runs the HEALTHCHECK command with `PORT` as the container's environment has it; its exit code. */
function runHealthcheck(port: string): Promise<number | null> {
  const env = { ...process.env, PORT: port };
  const child = spawn('/bin/sh', ['-c', healthcheckCommand()], { env, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', resolve));
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A healthy bot's /healthz on the port the bot itself would take. */
async function healthyBotOn(port: number): Promise<void> {
  const server = createServer((request, response) => {
    response.writeHead(request.url === '/healthz' ? 200 : 404, { 'content-type': 'application/json' });
    response.end('{"status":"ok"}');
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
}

function botPort(rawPort: string): number {
  return parseEnvironment({ PORT: rawPort, SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', OPENAI_API_KEY: 'sk-1' }, { fileExists: () => false }).slack.port;
}

describe("the image's HEALTHCHECK and the bot agree on PORT", () => {
  it('with the port as written', async () => {
    const free = await freePort();
    await healthyBotOn(botPort(String(free)));
    expect(await runHealthcheck(String(free))).toBe(0);
  });

  it('with a trailing space after the port (docker --env-file keeps it; the bot trims it)', async () => {
    const free = await freePort();
    const raw = `${free} `;
    // The bot listens on the port, trimmed...
    expect(botPort(raw)).toBe(free);
    await healthyBotOn(botPort(raw));
    // ...and the container's health check should find it there.
    expect(await runHealthcheck(raw)).toBe(0);
  });

  it('with a blank port (the bot takes 3000, and so does the check)', async () => {
    expect(botPort(' ')).toBe(3000);
    // Port 3000 may be taken on this machine: the check's fetch is replaced by one that reports the URL it was given.
    const fakeFetch = "globalThis.fetch=async(url)=>{process.stderr.write('URL '+url+'\\n');return {ok:true}}";
    const child = spawn('/bin/sh', ['-c', healthcheckCommand()], {
      env: { ...process.env, PORT: ' ', NODE_OPTIONS: `--import data:text/javascript,${encodeURIComponent(fakeFetch)}` },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stderr).toContain('URL http://127.0.0.1:3000/healthz');
    expect(code).toBe(0);
  });
});
