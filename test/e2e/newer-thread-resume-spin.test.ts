import { describe, expect, it } from 'vitest';
import { NewerSchemaError } from '../../src/store/newer-schema-error.js';
import type { StateStore } from '../../src/store/state-store.js';
import { threadKeyOf } from '../../src/store/thread-state.js';
import { CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * Review J (01ee152, newer-schema). A decided step this release reads, in a thread a newer release
 * saved (a release that bumped only THREAD_STATE_SCHEMA_VERSION, then was rolled back): the resume
 * item reads the thread, gets NewerSchemaError, and `leaveItemToNewerRelease` ends it silently,
 * leaving the step `complete` "for the recovery sweep of a release that reads it". But this
 * release's own recovery sweep (recoverStalledWork) finds the step complete and not busy and
 * submits its resume again, every sweep, on every replica, forever: a lock and fencing token per
 * sweep, a warning per sweep, and the thread is never told anything.
 *
 * The newer thread is simulated by the store wrapper (its reads of this thread throw the error the
 * Redis store throws for a thread of schema version + 1; the claim's prefetch is dropped, as the
 * Redis store drops it for such a thread).
 */
const harness = useHarnesses();

describe('a decided step whose thread a newer release saved', () => {
  it('is left to that release once, not resubmitted by every recovery sweep', async () => {
    const newer = { threadKey: undefined as string | undefined };
    const refuse = (threadKey: string) => {
      if (threadKey === newer.threadKey) throw new NewerSchemaError({ kind: 'thread', id: threadKey, found: 99, readable: 1 });
    };
    const wrapStore = (store: StateStore): StateStore => ({
      ...store,
      async getThread(threadKey) {
        refuse(threadKey);
        return store.getThread(threadKey);
      },
      async getStepAndThread(stepId, threadKey) {
        refuse(threadKey);
        return store.getStepAndThread(stepId, threadKey);
      },
      async lockAndTake(threadKey, ttlMs) {
        const taken = await store.lockAndTake(threadKey, ttlMs);
        if (taken && threadKey === newer.threadKey) {
          const { read: _dropped, ...rest } = taken;
          return rest;
        }
        return taken;
      },
    });
    const h = await harness({ wrapStore, sweepIntervalMs: 50, environment: { COUNTERSIGN_LOCK_TTL_MS: '200' } });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await h.settled();
    newer.threadKey = threadKeyOf({ teamId: TEAM_ID, channel: CHANNEL, threadTs });

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    const left = () => h.warnings().filter((line) => line.includes('"event":"item-left-to-newer-release"')).length;
    await waitFor(() => left() >= 1, { message: 'the resume to be left to the newer release' });
    // Barrier: several whole sweeps (each runs the recovery of stalled work) after the resume was left.
    for (let sweep = 0; sweep < 6; sweep += 1) await h.settled({ sweep: true });
    const recovered = h.warnings().filter((line) => line.includes('"event":"resume-recovered"')).length;
    expect({ resumesLeft: left(), resubmittedByRecovery: recovered }).toEqual({ resumesLeft: 1, resubmittedByRecovery: 0 });
  }, 60_000);
});
