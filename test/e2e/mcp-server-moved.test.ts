import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchBots } from '../helpers/bot-activity.js';
import { conversationOf, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { BOT_USER_ID, TEAM_ID, cardButtons, nextTs, startHarness, threadReplies, waitFor, type Harness } from './harness.js';

/**
 * Bob approves `k8s.delete_namespace {name: "scratch"}` on a card posted while the k8s MCP
 * server was configured for the staging cluster (`env: { KUBE_CONTEXT: staging }`). A deploy then
 * points the server at prod. The README promises that a deploy changing "an MCP tool's server"
 * while the card waits leaves the approval unused. Before the fix the fingerprint named the env by
 * its keys only, so the call ran, on prod.
 */
let world: { slack: FakeSlackApi; openai: FakeOpenAI; keyPrefix: string; logFile: string; watch: ReturnType<typeof watchBots> } | undefined;
const running: Harness[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.stop();
  await world?.slack.close();
  await world?.openai.close();
  world = undefined;
});

const SERVER = join(import.meta.dirname, '../fixtures/kube-context-mcp-server.mjs');

function k8sYaml(callsFile: string, context: string) {
  return `
instructions: You are a test ops bot.
mcpServers:
  k8s:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(SERVER)}, ${JSON.stringify(callsFile)}]
    env: { KUBE_CONTEXT: ${context} }
`;
}

async function deployWorld() {
  world = {
    slack: await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID }),
    openai: await startFakeOpenAI(),
    keyPrefix: `e2e:mcpenv:${Date.now()}:${Math.random()}:`,
    logFile: join(mkdtempSync(join(tmpdir(), 'countersign-mcpenv-')), 'invocations.log'),
    watch: watchBots(),
  };
  const shared = world;
  return async (configYaml: string) => {
    const h = await startHarness({ configYaml, shared });
    running.push(h);
    return h;
  };
}

async function stop(h: Harness) {
  await h.settled();
  running.splice(running.indexOf(h), 1);
  await h.stop();
}

/** Alice asks for the delete while the server is on `before`; Bob approves after a deploy puts it on `after`. */
async function approvedAcrossDeploy(before: string, after: string, answer: string) {
  const callsFile = join(mkdtempSync(join(tmpdir(), 'countersign-mcpenv-')), 'calls.jsonl');
  const deploy = await deployWorld();
  const old = await deploy(k8sYaml(callsFile, before));
  old.openai.enqueue({ toolCalls: [{ name: 'k8s__delete_namespace', arguments: { name: 'scratch' } }] });
  const threadTs = nextTs();
  await old.mention({ user: 'UALICE', text: `delete the scratch namespace on ${before}`, ts: threadTs });
  const card = await waitFor(() => threadReplies(old, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card', timeoutMs: 15_000 });
  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  await stop(old);

  // The new release: same server command, same tool and schema, the env of `after`.
  const fresh = await deploy(k8sYaml(callsFile, after));
  fresh.openai.enqueue({ text: answer });
  await fresh.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
  await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text === answer), { message: 'the answer', timeoutMs: 15_000 });
  await fresh.settled();
  const calls = existsSync(callsFile) ? readFileSync(callsFile, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line)) : [];
  const told = conversationOf(fresh.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
  return { calls, told };
}

describe('a deploy that points an MCP server elsewhere while a card waits', () => {
  it('the approval given for the staging server does not run the call on prod', { timeout: 40_000 }, async () => {
    const { calls, told } = await approvedAcrossDeploy('staging', 'prod', 'It did not run: the tool changed.');
    // Bob approved a delete on staging; before the fix it ran on prod.
    expect(calls).toEqual([]);
    expect(told).toContain('Not run: `k8s.delete_namespace` changed since it was approved (a deploy updated its definition), so nothing was run.');
  });

  it('the same config after a restart: the approved call runs once, as approved', { timeout: 40_000 }, async () => {
    const { calls } = await approvedAcrossDeploy('staging', 'staging', 'Deleted.');
    expect(calls).toEqual([{ name: 'delete_namespace', arguments: { name: 'scratch' }, context: 'staging' }]);
  });
});
