import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCertificates } from '../../test/helpers/test-certificates.js';

/**
 * Slack and the model provider are reached over TLS: the lean fetch must verify servers as Node's
 * fetch does, against the system's authorities plus NODE_EXTRA_CA_CERTS, which Node reads at start.
 * So each case runs the lean fetch in a fresh process against an HTTPS server whose certificate a
 * throwaway authority signed.
 */
const certificates = createTestCertificates();
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer({ cert: readFileSync(certificates.certFile), key: readFileSync(certificates.keyFile) }, (request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: true, method: request.method }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat.postMessage`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  certificates.remove();
});

/** Runs one POST through a fresh process's lean fetch; what it answered or how it failed. */
async function postFromFreshProcess(environment: Record<string, string>): Promise<string> {
  const leanFetch = new URL('./lean-fetch.ts', import.meta.url).href;
  const script = `
    const { createLeanFetch } = await import(${JSON.stringify(leanFetch)});
    try {
      const response = await createLeanFetch({ environment: {} })(${JSON.stringify(url)}, { method: 'POST', body: 'text=hi' });
      console.log('answered', response.status, await response.text());
    } catch (error) {
      console.log('failed', error.constructor.name, error.message, error.cause?.code);
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '', ...environment }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  await new Promise((resolve) => child.once('exit', resolve));
  return output.trim();
}

describe('lean fetch over TLS', () => {
  it('trusts an authority given in NODE_EXTRA_CA_CERTS, as fetch does', async () => {
    expect(await postFromFreshProcess({ NODE_EXTRA_CA_CERTS: certificates.caFile })).toBe('answered 200 {"ok":true,"method":"POST"}');
  });

  it('refuses a server whose certificate no trusted authority signed, as a network failure', async () => {
    expect(await postFromFreshProcess({})).toMatch(/^failed TypeError fetch failed (SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/);
  });
});
