import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { nodeVersionProblem } from '../../src/runtime/node-version-problem.js';
import { startRedisCluster } from './redis-cluster.js';
import { startRedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A Redis for the whole run; tests isolate themselves with their own key prefixes. */
    redisUrl: string;
    /** A 3-master Redis Cluster for the whole run (`redis+cluster://…`), for the store's cluster runs. */
    redisClusterUrl: string;
  }
}

/**
 * One redis-server and one 3-master Redis Cluster per test run (not per file) keep the suite fast;
 * an externally managed Redis (CI service container) is used instead when REDIS_URL is set, and
 * an external cluster when REDIS_CLUSTER_URL is.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // On an older Node the suite fails in dozens of unrelated-looking ways (TypeScript child
  // processes, vitest's own reporter): say the one thing that is wrong, as the bot itself does.
  const problem = nodeVersionProblem(process.versions.node);
  if (problem) {
    process.stderr.write(`${problem}\n(.ci/run installs it when it is missing.)\n`);
    process.exit(1);
  }
  // Tests make temporary directories (pid files, Redis data, fixtures) that nobody removes one by one:
  // one directory per run, which the workers inherit through TMPDIR, is removed at the end instead
  // (thousands piled up in /tmp on a developer machine).
  const runDirectory = mkdtempSync(join(tmpdir(), 'countersign-test-run-'));
  process.env.TMPDIR = runDirectory;
  const externalUrl = process.env.REDIS_URL;
  const externalClusterUrl = process.env.REDIS_CLUSTER_URL;
  const [redis, cluster] = await Promise.all([externalUrl ? undefined : startRedisServer(), externalClusterUrl ? undefined : startRedisCluster()]);
  project.provide('redisUrl', externalUrl || (redis?.url as string));
  project.provide('redisClusterUrl', externalClusterUrl || (cluster?.url as string));
  return async () => {
    await Promise.all([redis?.stop(), cluster?.stop()]);
    rmSync(runDirectory, { recursive: true, force: true });
  };
}
