import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appHomeOpenedEnvelope, homeActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { grantFromCard } from './grant-form.js';
import { BOT_USER_ID, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

/** Bob grants restarts in the channel from a card; the answer shows the call ran. */
async function grantRestarts(h: Harness): Promise<void> {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'granted' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
  await grantFromCard(h, { card, threadTs, scope: 'channel', hours: 4 });
  await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'granted'), { message: 'the answer' });
}

const homeText = (view: { blocks: any[] }) => JSON.stringify(view.blocks);

/**
 * Redis refuses the revoke's script with an error reply before it writes anything (here NOREPLICAS:
 * `min-replicas-to-write` with no replica; MISCONF, READONLY likewise): Redis answered, and the grant
 * is still in force. Whether from `/countersign grants` or
 * App Home, Bob must hear that nothing changed (so he revokes again), not "cannot tell whether it
 * went through", which is for a write that may have landed.
 */
describe('a grant revoke Redis refuses at once (NOREPLICAS)', () => {
  let server: RedisServerHandle;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  it('is told nothing changed, from `/countersign grants` and from App Home; the grant still stands', async () => {
    const h = await harness({ redisUrl: server.url });
    await grantRestarts(h);
    const publishes = () => h.slack.callsTo('views.publish').filter((call) => call.args.user_id === 'UBOB');
    const homeBefore = publishes().length;
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: appHomeOpenedEnvelope({ user: 'UBOB', teamId: TEAM_ID, botUserId: BOT_USER_ID }) });
    const home = (await waitFor(() => publishes()[homeBefore], { message: "Bob's Home" })).args.view as { blocks: any[] };
    await h.slashCommand({ user: 'UBOB', text: 'grants' });
    const list = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => String(call.args.text).includes('active grant')), { message: 'grant list' });
    const listed = (list.args.blocks as any[])[0].accessory as { action_id: string; value: string };

    // No replica for `min-replicas-to-write`: every write is refused with NOREPLICAS (reads still
    // answered). Not OOM: a revoke only deletes, and Redis at maxmemory lets a deletion through.
    await admin.config('SET', 'min-replicas-to-write', '1');
    try {
      const ephemerals = h.slack.callsTo('chat.postEphemeral').length;
      await h.click({ user: 'UBOB', cardTs: '1.1', threadTs: '1.1', actionId: listed.action_id, value: listed.value });
      const fromList = String((await waitFor(() => h.slack.callsTo('chat.postEphemeral')[ephemerals], { message: 'the Revoke answer' })).args.text);
      // Soft: the App Home answer below is checked too when this one is wrong.
      expect.soft(fromList, '/countersign grants: told it may have gone through although Redis refused it unrun').not.toContain('cannot tell');
      expect.soft(fromList).toContain('nothing changed: it is still in force');

      const revoke = [...home.blocks.filter((block) => block.accessory).map((block) => block.accessory)].find((button) => button.action_id === 'countersign_home_revoke_grant');
      const before = publishes().length;
      await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: homeActionsPayload({ user: 'UBOB', view: { id: 'VHOME0001', ...home }, teamId: TEAM_ID, actionId: revoke.action_id, value: revoke.value }) });
      const fromHome = homeText((await waitFor(() => publishes()[before], { message: 'the Home after Revoke' })).args.view as { blocks: any[] });
      expect(fromHome, 'App Home: told it may have gone through although Redis refused it unrun').not.toContain('cannot tell');
      // Not App Home's own answer for a failure before the revoke (its grants unreadable): revokeGrantAs's.
      expect(fromHome).toContain('nothing changed: it is still in force');
    } finally {
      await admin.config('SET', 'min-replicas-to-write', '0');
    }
    // Nothing was revoked: the grant stands.
    expect((await h.auditEvents()).map((event) => event.type)).not.toContain('grant-revoked');
    expect(await h.bot.store.listTeamGrants({ teamId: TEAM_ID })).toHaveLength(1);
  }, 30_000);
});
