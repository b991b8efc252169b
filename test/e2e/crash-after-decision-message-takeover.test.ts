import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { cardButtons, readInvocations, recordingToolsYaml, waitFor } from './harness.js';
import { appMentionEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { mentionAndApprove, PAIR_BOT_USER, PAIR_CHANNEL, PAIR_SECRET, PAIR_TEAM, pairEnvironment, pairReplies, usePairWorld } from './bot-pair.js';
import { freePort, startChildBot, stopChildBot, type ChildBot } from './child-bot.js';

/**
 * 94786d3: the card a process left "waiting" when it stopped right after recording a decision is
 * "drawn by whoever takes its work over" — but only a takeover by the recovery sweep
 * (`startPickUp`, `Lease.recovered`) draws it. The same dead holder's resume item taken over by a
 * new message in the thread (`worker.submit` → `enqueueWork` takes the lapsed lock and drains the
 * in-flight resume first) runs under a lease that is not `recovered`: the claim changes nothing, so
 * `claimAndResume` draws nothing, and the call runs while the card keeps "waiting" and live
 * Approve/Deny buttons. Nothing draws it later: the step is resumed (no completed-step recovery),
 * the thread is not stalled, and no card refresh was kept.
 *
 * In production the window is between the dead holder's lock lapsing and the next sweep of a
 * process with room (up to COUNTERSIGN_SWEEP_INTERVAL_MS, 5 s by default, longer when the only
 * replica is the one restarting, whose Slack events are redelivered on start). Here the survivor's
 * sweep interval is a day, so the message is the takeover, deterministically.
 */
const world = usePairWorld();

async function listening(bot: ChildBot): Promise<void> {
  await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: `start-up: ${bot.output().slice(-1000)}` });
}

describe('a decision whose process died before drawing it, taken over by a new message in the thread', () => {
  it('leaves no live Approve/Deny buttons on the card once the call ran', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-takeover-'));
    const logFile = join(directory, 'invocations.log');
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(logFile));
    const { slack, openai, redis, mainJs } = world;
    const [doomedPort, survivorPort] = [await freePort(), await freePort()];
    const doomed = startChildBot(
      pairEnvironment({ slack, openai, redis, configPath, port: doomedPort, extra: { COUNTERSIGN_SLACK_FRONT: 'inline', COUNTERSIGN_CRASH_AT: 'after-decision' } }),
      { mainJs },
    );
    // No recovery sweep during the test: the only takeover is the message's.
    const survivor = startChildBot(pairEnvironment({ slack, openai, redis, configPath, port: survivorPort, extra: { COUNTERSIGN_SWEEP_INTERVAL_MS: '86400000' } }), { mainJs });
    const redisClient = new Redis(redis.url);
    try {
      await Promise.all([listening(doomed), listening(survivor)]);
      openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] }, { text: 'Restarted api.' }, { text: 'Nothing else to do.' });
      const threadTs = '1800200002.000100';
      await mentionAndApprove(slack, `http://127.0.0.1:${doomedPort}/slack/events`, threadTs);
      // Killed at the fault point, right after its decision's write (which queued the resume and took the thread's lock).
      expect(await doomed.exited).toBeNull();
      const cardTs = pairReplies(slack, threadTs).find((message) => cardButtons(message.blocks).length > 0)!.ts;

      // Barrier: the dead holder's lock has lapsed (its TTL is PAIR_LOCK_TTL_MS).
      await waitFor(async () => (await redisClient.keys('*lock:*')).length === 0, { timeoutMs: 15_000, message: "the dead holder's lock to lapse" });

      // Someone asks in the thread: the survivor takes the thread and drains the dead holder's resume first.
      await postSlackEvent({
        url: `http://127.0.0.1:${survivorPort}/slack/events`,
        signingSecret: PAIR_SECRET,
        envelope: appMentionEnvelope({ user: 'UALICE', text: `<@${PAIR_BOT_USER}> anything else?`, channel: PAIR_CHANNEL, ts: '1800200099.000100', threadTs, teamId: PAIR_TEAM }),
      });
      await waitFor(() => pairReplies(slack, threadTs).some((message) => message.text === 'Nothing else to do.'), { timeoutMs: 20_000, message: 'the answer to the new message' }).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}; replies: ${JSON.stringify(pairReplies(slack, threadTs).map((m) => m.text))}; survivor: ${survivor.output().slice(-4000)}`);
      });
      expect(pairReplies(slack, threadTs).some((message) => message.text === 'Restarted api.')).toBe(true);
      expect(readInvocations(logFile)).toEqual([['rollout', 'restart', 'deployment/api', '-n', 'prod']]);

      // The call ran: its card must not keep "waiting" and live buttons.
      const card = pairReplies(slack, threadTs).find((message) => message.ts === cardTs)!;
      expect(cardButtons(card.blocks)).toEqual([]);
    } finally {
      redisClient.disconnect();
      await Promise.all([doomed, survivor].map((bot) => stopChildBot(bot)));
    }
  }, 90_000);
});
