import { describe, expect, it } from 'vitest';
import type { StoredAuditEvent } from './audit-event.js';
import { runAuditCli } from './run-audit-cli.js';

/**
 * The trail may hold 100,000 entries per stream, two streams per shard, 16 shards by default, kept 90
 * days (README): `npm run audit -- --since 90d --json > trail.jsonl` on a busy deployment is a few
 * hundred MB to GB of JSON lines. runAuditCli builds the whole output as ONE string
 * (formatAuditJsonLines(...).join('')) before writing it; past V8's string limit (~512 Mi chars) that
 * throws "RangeError: Invalid string length" out of runAuditCli: nothing is written, no exit code.
 *
 * Redis is replaced here by a reader returning a window of 60 events. Writing the ~600 MB it would
 * take to pass that limit filled the heap of the suite's shared workers (a worker died of it), so the
 * test checks what keeps any window under it: each event is written as its own line, never all of
 * them as one string.
 */
const BIG = 'x'.repeat(10 * 1024);
const events: StoredAuditEvent[] = Array.from({ length: 60 }, (_, index) => ({
  id: `${1_800_000_000_000 + index}-0`,
  at: 1_800_000_000_000 + index,
  type: 'tool-started',
  toolName: 'write_file',
  input: { content: BIG },
  teamId: 'T1',
  channel: 'C1',
  threadTs: '1.1',
  toolCallId: `call-${index}`,
  basis: { kind: 'no-approval-needed' },
}) as unknown as StoredAuditEvent);

// Given as an option, not vi.mock: test files share a worker's module graph (isolate: false), and a
// module mock leaked into the next audit test file there.
const readAudit = async () => events;

describe('npm run audit --json with a large window', () => {
  it('writes every event as a line of its own, so no window is ever one string past V8\'s limit', async () => {
        const writes: number[] = [];
    let outcome: number | Error;
    try {
      outcome = await runAuditCli({
        argv: ['--since', '90d', '--json'],
        env: { REDIS_URL: 'redis://127.0.0.1:1', COUNTERSIGN_REDIS_SHARDS: '16' },
        now: 1_800_000_100_000,
        readAudit,
        stdout: {
          write: (text: string) => {
            writes.push(text.split('\n').length - 1);
          },
        },
        stderr: { write: () => {} },
      });
    } catch (error) {
      outcome = error as Error;
    }
    expect(outcome).toBe(0);
    expect(writes).toEqual(Array.from({ length: 60 }, () => 1));
  });

  it('ends an unexpected error in one line and exit code 1, not a stack trace', async () => {
        let stderr = '';
    const code = await runAuditCli({
      argv: ['--since', '90d', '--json'],
      env: { REDIS_URL: 'redis://:hunter2@127.0.0.1:1', COUNTERSIGN_REDIS_SHARDS: '16' },
      now: 1_800_000_100_000,
      readAudit,
      stdout: {
        write: () => {
          throw new Error('ENOSPC: no space left on device');
        },
      },
      stderr: { write: (text: string) => (stderr += text) },
    });
    expect(code).toBe(1);
    expect(stderr).toBe('countersign audit: failed: Error: ENOSPC: no space left on device\n');
  });
});
