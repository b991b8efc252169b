import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredAuditEvent } from '../../src/audit/audit-event.js';
import { createRedisAuditLog } from '../../src/store/redis-audit-log.js';
import type { PendingStep } from '../../src/approvals/pending-step.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { conversationOf, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { appMentionEnvelope, blockActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { buildIsolatedBot, freePort, startChildBot, stopChildBot, waitUntilListening, type ChildBot } from './child-bot.js';
import { readInvocations, recordingToolsYaml, waitFor } from './harness.js';

/**
 * Several bot processes share one Redis behind one Slack app: any process takes any click, and a
 * burst of concurrent clicks spread over the processes — double clicks, several approvers, Deny
 * racing Approve — decides each call once, runs each approved call once, leaves every card showing
 * what happened, and answers each thread once.
 *
 * The other half of the replica guarantee, "kill one process mid-turn and another finishes it", is
 * covered by crash-recovery.test.ts (SIGKILL after the decision, while the tool runs, before the
 * answer is posted), with the same two-process set-up.
 */
const SECRET = 'replicas-secret';
const CHANNEL = 'C0REPLICA1';
const TEAM = 'T0TEAM001';
const BOT_USER = 'UBOTREPL';
const REQUESTER = 'UALICE';
const OPS = ['U0OPS1', 'U0OPS2', 'U0OPS3'];
const MALLORY = 'U0MALLORY';

/** Prod restarts need two of the three ops people; staging restarts anyone in the channel. */
const POLICY_YAML = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [${OPS.join(', ')}]
      required: 2
`;

type Action = 'approve' | 'deny';
interface Scenario {
  threadTs: string;
  /** The calls the model makes in its one step: restarts of these services (plus get_pods when set). */
  services: string[];
  namespace: 'staging' | 'prod';
  readOnlyCallToo?: boolean;
  /** Who clicks what, per service; repeated entries are double clicks. */
  clicks: Record<string, Array<[user: string, action: Action]>>;
  /** When the clicks cannot race to different outcomes, the outcome each call must get. */
  expected?: 'approved';
}

const SCENARIOS: Record<string, Scenario> = {
  // One call, many approvers, several of them clicking two or three times.
  single: {
    threadTs: '1800200001.000100',
    services: ['single-worker'],
    namespace: 'staging',
    clicks: {
      'single-worker': [
        ['UBOB', 'approve'], ['UBOB', 'approve'], ['UBOB', 'approve'], ['UCAROL', 'approve'],
        ['UCAROL', 'approve'], ['UDAVE', 'approve'], ['UDAVE', 'approve'], ['UERIN', 'approve'],
      ],
    },
    expected: 'approved',
  },
  // Deny races Approve on one call.
  race: {
    threadTs: '1800200002.000100',
    services: ['race-cache'],
    namespace: 'staging',
    clicks: {
      'race-cache': [
        ['UBOB', 'deny'], ['UBOB', 'deny'], ['UCAROL', 'approve'], ['UCAROL', 'approve'],
        ['UDAVE', 'deny'], ['UERIN', 'approve'], ['UFRANK', 'approve'], ['UFRANK', 'deny'],
      ],
    },
  },
  // Two gated calls and a read-only one in the same step; Deny races Approve on both.
  mixed: {
    threadTs: '1800200003.000100',
    services: ['mixed-api', 'mixed-web'],
    namespace: 'staging',
    readOnlyCallToo: true,
    clicks: {
      'mixed-api': [['UBOB', 'approve'], ['UBOB', 'approve'], ['UCAROL', 'deny'], ['UCAROL', 'deny'], ['UDAVE', 'approve']],
      'mixed-web': [['UERIN', 'approve'], ['UBOB', 'deny'], ['UCAROL', 'approve'], ['UDAVE', 'deny'], ['UERIN', 'approve']],
    },
  },
  // Four calls in one step, all approved at once: the decisions race to complete the step.
  wide: {
    threadTs: '1800200004.000100',
    services: ['wide-a', 'wide-b', 'wide-c', 'wide-d'],
    namespace: 'staging',
    clicks: {
      'wide-a': [['UBOB', 'approve'], ['UCAROL', 'approve'], ['UBOB', 'approve']],
      'wide-b': [['UDAVE', 'approve'], ['UERIN', 'approve']],
      'wide-c': [['UCAROL', 'approve'], ['UCAROL', 'approve'], ['UFRANK', 'approve']],
      'wide-d': [['UERIN', 'approve'], ['UBOB', 'approve']],
    },
    expected: 'approved',
  },
  // A prod call needing two of three ops people; they all click (some twice), and so does Mallory.
  quorum: {
    threadTs: '1800200005.000100',
    services: ['quorum-payments'],
    namespace: 'prod',
    clicks: {
      'quorum-payments': [
        [OPS[0]!, 'approve'], [OPS[0]!, 'approve'], [OPS[0]!, 'approve'], [OPS[1]!, 'approve'],
        [OPS[1]!, 'approve'], [OPS[2]!, 'approve'], [OPS[2]!, 'approve'], [MALLORY, 'approve'], [MALLORY, 'approve'],
      ],
    },
    expected: 'approved',
  },
};

const scenarioNamed = (name: string) => SCENARIOS[name]!;
const answerFor = (name: string) => `Finished ${name}.`;

let mainJs: string;
let redis: RedisServerHandle;
let slack: FakeSlackApi;
let openai: FakeOpenAI;
let bots: ChildBot[] = [];
let urls: string[] = [];
let logFile: string;

beforeAll(async () => {
  mainJs = buildIsolatedBot();
  redis = await startRedisServer();
  slack = await startFakeSlackApi({ botUserId: BOT_USER, botId: 'BBOTREPL', teamId: TEAM });
  openai = await startFakeOpenAI();
  // Threads run concurrently, so the model answers from the conversation rather than a queue:
  // the mention gets the scenario's calls, the resumed turn gets the closing text.
  openai.setResponder((request) => {
    const conversation = conversationOf(request);
    const name = /scenario (\w+)/.exec(conversation.find((entry) => entry.role === 'user')?.text ?? '')?.[1] ?? '';
    const scenario = SCENARIOS[name];
    if (!scenario) return { error: { status: 400, message: `no scenario in ${JSON.stringify(conversation)}` } };
    if (conversation.at(-1)?.role !== 'user') return { text: answerFor(name) };
    return {
      toolCalls: [
        ...(scenario.readOnlyCallToo ? [{ name: 'get_pods', arguments: { namespace: scenario.namespace } }] : []),
        ...scenario.services.map((service) => ({ name: 'restart_service', arguments: { service, namespace: scenario.namespace } })),
      ],
    };
  });

  const directory = mkdtempSync(join(tmpdir(), 'countersign-replicas-'));
  logFile = join(directory, 'invocations.log');
  const configPath = join(directory, 'countersign.yml');
  writeFileSync(configPath, `${recordingToolsYaml(logFile)}\n${POLICY_YAML}`);
  const ports = [await freePort(), await freePort()];
  bots = ports.map((port) =>
    startChildBot(
      {
        SLACK_BOT_TOKEN: 'xoxb-replicas',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: slack.url,
        SLACK_BOT_USER_ID: BOT_USER,
        SLACK_BOT_ID: 'BBOTREPL',
        OPENAI_API_KEY: 'sk-replicas',
        OPENAI_BASE_URL: openai.baseURL,
        OPENAI_API: 'chat',
        REDIS_URL: redis.url,
        COUNTERSIGN_CONFIG: configPath,
        // Frequent sweeps, so each process's recovery sweep races the live resumes as well.
        COUNTERSIGN_SWEEP_INTERVAL_MS: '50',
        LOG_LEVEL: 'info',
        PORT: String(port),
      },
      { mainJs },
    ),
  );
  urls = ports.map((port) => `http://127.0.0.1:${port}/slack/events`);
  await Promise.all(bots.map((bot) => waitUntilListening(bot)));
}, 120_000);

afterAll(async () => {
  await Promise.all(bots.map((bot) => stopChildBot(bot)));
  await slack?.close();
  await openai?.close();
  await redis?.stop();
});

const replies = (threadTs: string) => slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs);
const invocations = () => readInvocations(logFile);

/** The card's calls in order: the service named in each call's section, its buttons, and its footer text. */
function cardCalls(blocks: any[] | undefined) {
  const calls: Array<{ service: string; buttons: Record<string, string>; footer: string }> = [];
  for (const block of blocks ?? []) {
    if (block.type === 'section') {
      const service = /"service": "([a-z0-9-]+)"/.exec(String(block.text?.text).replaceAll('&quot;', '"'))?.[1];
      if (service) calls.push({ service, buttons: {}, footer: '' });
    } else if (block.type === 'actions' && calls.length > 0) {
      for (const element of block.elements) calls.at(-1)!.buttons[element.action_id] = element.value;
    } else if (block.type === 'context' && calls.length > 0 && calls.at(-1)!.footer === '' && Object.keys(calls.at(-1)!.buttons).length === 0) {
      calls.at(-1)!.footer = block.elements.map((element: any) => element.text).join(' ');
    }
  }
  return calls;
}

async function readAudit(): Promise<StoredAuditEvent[]> {
  const reader = createRedisAuditLog({ url: redis.url, logger: pino({ level: 'silent' }) });
  try {
    return await reader.read({ sinceMs: 0 });
  } finally {
    await reader.close();
  }
}

/** Resolves once nothing has reached the fake Slack for `quietMs`: every card refresh has landed. */
async function slackSettled(quietMs = 500): Promise<void> {
  let count = -1;
  let since = Date.now();
  await waitFor(
    () => {
      if (slack.calls.length !== count) {
        count = slack.calls.length;
        since = Date.now();
      }
      return Date.now() - since >= quietMs;
    },
    { timeoutMs: 30_000, message: 'Slack traffic to settle' },
  );
}

describe('several bot processes behind one Slack app', () => {
  it('decides a burst of concurrent clicks spread over both processes once per call, runs each approved call once, and keeps every card true', async () => {
    // Mentions go to alternating processes too: any process can start any turn.
    const names = Object.keys(SCENARIOS);
    await Promise.all(
      names.map((name, index) =>
        postSlackEvent({
          url: urls[index % urls.length]!,
          signingSecret: SECRET,
          envelope: appMentionEnvelope({ user: REQUESTER, text: `<@${BOT_USER}> run scenario ${name}`, channel: CHANNEL, ts: scenarioNamed(name).threadTs, teamId: TEAM }),
        }),
      ),
    );
    const cards = new Map(
      await Promise.all(
        names.map(
          async (name) =>
            [name, await waitFor(() => replies(scenarioNamed(name).threadTs).find((message) => cardCalls(message.blocks).some((call) => call.buttons.countersign_approve)), { timeoutMs: 20_000, message: `card for ${name}` })] as const,
        ),
      ),
    );
    expect(invocations()).toEqual([['get', 'pods', '-n', 'staging']]);

    // Every click, interleaved across threads and calls, alternating between the two processes.
    const clicks = names.flatMap((name) => {
      const scenario = scenarioNamed(name);
      const card = cards.get(name)!;
      return Object.entries(scenario.clicks).flatMap(([service, list]) =>
        list.map(([user, action]) => {
          const call = cardCalls(card.blocks).find((candidate) => candidate.service === service)!;
          const actionId = action === 'approve' ? 'countersign_approve' : 'countersign_deny';
          return { name, service, user, action, actionId, value: call.buttons[actionId]!, cardTs: card.ts, threadTs: scenario.threadTs };
        }),
      );
    });
    const shuffled = clicks.map((click, index) => ({ click, key: (index * 17) % clicks.length })).sort((a, b) => a.key - b.key).map(({ click }) => click);
    const responses = await Promise.all(
      shuffled.map((click, index) =>
        postSlackInteraction({
          url: urls[index % urls.length]!,
          signingSecret: SECRET,
          payload: blockActionsPayload({ user: click.user, channel: CHANNEL, messageTs: click.cardTs, threadTs: click.threadTs, actionId: click.actionId, value: click.value, teamId: TEAM }),
        }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(shuffled.map(() => 200));

    // Done: every thread answered, and every click either recorded a decision or was answered privately.
    for (const name of names) {
      await waitFor(() => replies(scenarioNamed(name).threadTs).some((message) => message.text === answerFor(name)), { timeoutMs: 30_000, message: `answer in ${name}` });
    }
    await waitFor(
      async () => (await readAudit()).filter((event) => event.type === 'decision').length + slack.callsTo('chat.postEphemeral').length >= clicks.length,
      { timeoutMs: 30_000, message: 'every click to be answered' },
    );
    await slackSettled();

    const audit = await readAudit();
    const store = createRedisStore({ url: redis.url });
    const ran = invocations();
    const ephemerals = slack.callsTo('chat.postEphemeral').map((call) => ({ user: String(call.args.user), threadTs: String(call.args.thread_ts), text: String(call.args.text) }));
    const winners: Array<{ threadTs: string; outcome: string; userId: string }> = [];
    try {
      for (const name of names) {
        const scenario = scenarioNamed(name);
        const postedCard = cards.get(name)!;
        const stepId = Object.values(cardCalls(postedCard.blocks)[0]!.buttons)[0]!.split(':')[0]!;
        const step = (await store.getStep(stepId)) as PendingStep;
        expect(step.phase, name).toBe('resumed');

        // The card as Slack shows it now (after the update that landed last): no buttons left, every call's outcome.
        const finalCard = slack.messages(CHANNEL, scenario.threadTs).find((message) => message.ts === postedCard.ts)!;
        const shown = cardCalls(finalCard.blocks);
        expect(shown.map((call) => call.service), name).toEqual(scenario.services);
        expect(JSON.stringify(finalCard.blocks), name).toContain('All decided');
        expect(finalCard.text, name).toMatch(/^Approval decided/);

        // What the model was told when the turn resumed (the one request after the tool results).
        const modelRequests = openai.requests.filter((request) => conversationOf(request).some((entry) => entry.role === 'user' && entry.text?.includes(`scenario ${name}`)));
        expect(modelRequests, name).toHaveLength(2);
        const toolResults = conversationOf(modelRequests[1]!).filter((entry) => entry.role === 'tool');

        for (const call of step.calls) {
          const service = (call.input as { service: string }).service;
          const decision = step.decisions[call.approvalId]!;
          const context = `${name}/${service}`;
          expect(['approved', 'denied'], context).toContain(decision.outcome);
          if (scenario.expected) expect(decision.outcome, context).toBe(scenario.expected);
          // The winner is someone who clicked that outcome on that call.
          const clickedIt = scenario.clicks[service]!.filter(([, action]) => (action === 'approve' ? 'approved' : 'denied') === decision.outcome).map(([user]) => user);
          expect(clickedIt, context).toContain(decision.userId);
          winners.push({ threadTs: scenario.threadTs, outcome: decision.outcome, userId: decision.userId });

          // Ran exactly once when approved, never when denied.
          const runs = ran.filter((argv) => argv[2] === `deployment/${service}`);
          expect(runs, context).toHaveLength(decision.outcome === 'approved' ? 1 : 0);
          const executed = audit.filter((event) => event.type === 'tool-executed' && event.toolCallId === call.toolCallId);
          expect(executed, context).toHaveLength(decision.outcome === 'approved' ? 1 : 0);

          // One decision per call in the audit trail (a quorum: one entry per approver, the last one decides).
          const decisions = audit.filter((event) => event.type === 'decision' && event.approvalId === call.approvalId);
          const required = call.policy?.required ?? 1;
          if (required === 1) {
            expect(decisions.map((event) => event.type === 'decision' && [event.outcome, event.userId]), context).toEqual([[decision.outcome, decision.userId]]);
          } else {
            const approvers = decisions.map((event) => (event.type === 'decision' ? event.userId : ''));
            expect(new Set(approvers).size, context).toBe(required);
            expect(approvers.every((user) => OPS.includes(user)), context).toBe(true);
            // Processes append to the audit stream in their own time, so the entries may be in either order.
            const quorum = decisions.flatMap((event) => (event.type === 'decision' ? [{ ...event.quorum, userId: event.userId }] : []));
            expect(quorum.sort((left, right) => (left.have ?? 0) - (right.have ?? 0)), context).toEqual([
              { have: 1, need: 2, userId: expect.any(String) },
              { have: 2, need: 2, userId: decision.userId },
            ]);
            expect(step.approvals?.[call.approvalId]?.map((approval) => approval.userId).sort(), context).toEqual([...approvers].sort());
          }

          // The card says what happened, naming who decided.
          const footer = shown.find((candidate) => candidate.service === service)!;
          expect(footer.buttons, context).toEqual({});
          if (decision.outcome === 'approved') {
            expect(footer.footer, context).toMatch(/^:white_check_mark: Approved by /);
            for (const approval of step.approvals?.[call.approvalId] ?? [decision]) expect(footer.footer, context).toContain(`<@${approval.userId}>`);
          } else {
            expect(footer.footer, context).toMatch(new RegExp(`^:x: Denied by <@${decision.userId}>`));
          }

          // The model heard the same story: the result when it ran, the denial when it did not.
          const told = toolResults.find((entry) => entry.toolCallId === call.toolCallId)?.text ?? '';
          if (decision.outcome === 'approved') expect(told, context).toContain(`ok: rollout restart deployment/${service}`);
          else expect(told, context).toContain(`Declined by <@${decision.userId}>`);
        }

        // The thread holds the one card and one answer: no second card, no error notice, no repeated answer.
        expect(replies(scenario.threadTs).map((message) => (message.ts === postedCard.ts ? 'card' : message.text)), name).toEqual(['card', answerFor(name)]);
      }
    } finally {
      await store.close();
    }

    // The read-only call of the mixed step ran once, before the card; nothing else ran.
    expect(ran.filter((argv) => argv[0] === 'get')).toEqual([['get', 'pods', '-n', 'staging']]);
    expect(ran).toHaveLength(1 + winners.filter((winner) => winner.outcome === 'approved').length);

    // Every click that did not record a decision was answered privately, and told the truth.
    const recorded = audit.filter((event) => event.type === 'decision').length;
    expect(recorded + ephemerals.length).toBe(clicks.length);
    const refusals: string[] = [];
    for (const ephemeral of ephemerals) {
      // Every refused click is audited, whatever the reason.
      refusals.push(ephemeral.user);
      const already = /^Already (approved|denied) by <@(\w+)>, so nothing changed\.$/.exec(ephemeral.text);
      if (already) {
        expect(winners, ephemeral.text).toContainEqual({ threadTs: ephemeral.threadTs, outcome: already[1], userId: already[2] });
        continue;
      }
      // Refused while the quorum call was open: Mallory is not an approver, an ops person who already approved cannot count twice.
      expect(ephemeral.threadTs).toBe(scenarioNamed('quorum').threadTs);
      if (ephemeral.user === MALLORY) expect(ephemeral.text).toMatch(/^Only <@U0OPS1>, <@U0OPS2> or <@U0OPS3> can approve this, so nothing changed\.$/);
      else expect(ephemeral.text).toBe('You already approved this; it needs 1 more approver, so nothing changed.');
      expect(OPS.concat(MALLORY)).toContain(ephemeral.user);
    }
    expect(ephemerals.filter((ephemeral) => ephemeral.user === MALLORY)).toHaveLength(2);
    const attempts = audit.flatMap((event) => (event.type === 'action-refused' ? [event.userId] : []));
    expect(attempts.sort()).toEqual(refusals.sort());
  }, 120_000);
});
