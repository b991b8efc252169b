import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServerHandle, type RedisTlsFiles } from './redis-server.js';

export interface RedisClusterHandle {
  /** `redis+cluster://user:password@127.0.0.1:<port>,…`: every master as a seed, with the ACL user. */
  url: string;
  nodes: RedisServerHandle[];
  stop(): Promise<void>;
}

const CLUSTER_SLOTS = 16_384;
const READY_TIMEOUT_MS = 15_000;

/**
 * A throwaway Redis Cluster of `masters` masters on free loopback ports, no replicas. Slots are
 * assigned the way `redis-cli --cluster create` does (contiguous, equal ranges) with
 * CLUSTER ADDSLOTSRANGE and the nodes introduced with CLUSTER MEET, which is quicker than the CLI's
 * waits. Node files live in a private temporary directory that `stop()` deletes. The nodes admit
 * only an ACL user (the default user is off), so every client connection must log in.
 */
export async function startRedisCluster({ masters = 3, tls }: { masters?: number; tls?: RedisTlsFiles } = {}): Promise<RedisClusterHandle> {
  const directory = mkdtempSync(join(tmpdir(), 'countersign-cluster-'));
  const username = 'countersign';
  const password = randomUUID();
  const removeDirectory = () => rmSync(directory, { recursive: true, force: true });
  process.once('exit', removeDirectory);
  const nodes: RedisServerHandle[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    process.off('exit', removeDirectory);
    removeDirectory();
  };
  try {
    const started = await Promise.allSettled(
      Array.from({ length: masters }, (_unused, index) =>
        startRedisServer({
          extraArguments: [
            ...['--cluster-enabled', 'yes', '--cluster-config-file', join(directory, `nodes-${index}.conf`), '--cluster-node-timeout', '2000', '--dir', directory],
            ...['--user', username, 'on', `>${password}`, '~*', '&*', '+@all', '--user', 'default', 'off'],
            // The cluster bus and the addresses CLUSTER SLOTS hands to clients are TLS too.
            ...(tls ? ['--tls-cluster', 'yes', '--tls-replication', 'yes'] : []),
          ],
          ...(tls && { tls }),
        }),
      ),
    );
    for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    const clients = nodes.map((node) => new Redis(node.port, '127.0.0.1', { username, password, ...(tls && { tls: { ca: readFileSync(tls.caFile) } }) }));
    try {
      await Promise.all(
        clients.map((client, index) =>
          client.call('CLUSTER', 'ADDSLOTSRANGE', String(Math.floor((index * CLUSTER_SLOTS) / masters)), String(Math.floor(((index + 1) * CLUSTER_SLOTS) / masters) - 1)),
        ),
      );
      for (const node of nodes.slice(1)) await clients[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(node.port));
      await waitUntilFormed(clients, masters);
    } finally {
      for (const client of clients) client.disconnect();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `${tls ? 'rediss' : 'redis'}+cluster://${username}:${password}@${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`, nodes, stop };
}

/** Every node must see every other and all slots covered before a client can rely on its slot map. */
async function waitUntilFormed(clients: Redis[], masters: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const infos = await Promise.all(clients.map((client) => client.call('CLUSTER', 'INFO') as Promise<string>));
    if (infos.every((info) => info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${masters}`))) return;
    if (Date.now() > deadline) throw new Error(`the Redis Cluster did not form within ${READY_TIMEOUT_MS} ms:\n${infos.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
