import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { StoredAuditEvent } from '../../src/audit/audit-event.js';
import { createRedisAuditLog } from '../../src/store/redis-audit-log.js';
import { mentionAndApprove, pairReplies, startBotPair, usePairWorld } from './bot-pair.js';
import { waitFor } from './harness.js';

/**
 * A process is killed after an approved call's executing marker (and its `tool-started` record) was
 * written: once the command ran ('after-tool'), or before it started ('after-marker'). The other
 * process closes the call in the history ("Interrupted…" / "may or may not have completed") and tells
 * the model, but writes nothing to the audit trail. The trail keeps a `tool-started` with no outcome
 * forever: a reviewer cannot tell a call that ran from one that never started, nor from one still
 * running, although the README promises every tool execution's status in the trail and "the audit
 * trail is complete whenever the state is".
 */
const world = usePairWorld();

async function trailOf(threadTs: string): Promise<StoredAuditEvent[]> {
  const log = createRedisAuditLog({ url: world.redis.url, keyPrefix: 'countersign:', logger: pino({ level: 'silent' }) });
  try {
    return (await log.read({ sinceMs: 0 })).filter((event) => 'threadTs' in event && event.threadTs === threadTs);
  } finally {
    await log.close();
  }
}

describe('an approved call whose process was killed after its marker', () => {
  for (const [point, threadTs, answer] of [
    ['after-tool', '1800900001.000100', 'The restart may have gone through.'],
    ['after-marker', '1800900002.000100', 'The restart may not have happened.'],
  ] as const) {
    it(`killed ${point}: the trail says what came of the started call`, async () => {
      const pair = await startBotPair({ ...world, fault: { COUNTERSIGN_CRASH_AT: point }, holdSurvivor: true });
      try {
        world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: answer });
        await mentionAndApprove(world.slack, pair.doomedUrl, threadTs);
        expect(await pair.doomed.exited).toBeNull();
        pair.releaseSurvivor();
        await waitFor(() => pairReplies(world.slack, threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'answer from the survivor' });
        const trail = await trailOf(threadTs);
        const started = trail.filter((event) => event.type === 'tool-started');
        expect(started).toHaveLength(1);
        const toolCallId = (started[0] as { toolCallId: string }).toolCallId;
        const outcome = trail.filter((event) => event.type === 'tool-executed' && event.toolCallId === toolCallId);
        expect(outcome, `trail: ${trail.map((event) => event.type).join(', ')}`).toHaveLength(1);
      } finally {
        await pair.stop();
      }
    }, 90_000);
  }
});
