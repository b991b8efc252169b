import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisTlsFiles } from './redis-server.js';

/**
 * A throwaway certificate authority and a server certificate for 127.0.0.1 and localhost, made
 * with the openssl CLI (arguments, no shell) in a private directory that `remove()` deletes.
 */
export function createTestCertificates(): RedisTlsFiles & { remove(): void } {
  const directory = mkdtempSync(join(tmpdir(), 'countersign-tls-'));
  const file = (name: string) => join(directory, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=countersign test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(file('san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('san.cnf'));
  return { certFile: file('server.pem'), keyFile: file('server.key'), caFile: file('ca.pem'), remove: () => rmSync(directory, { recursive: true, force: true }) };
}
