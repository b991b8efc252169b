import { afterEach, expect, inject } from 'vitest';
import { startReplyLosingProxy, type ReplyLosingProxy } from '../helpers/reply-losing-proxy.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * Harnesses (`useHarnesses`) whose bots may reach the tests' Redis through a reply-losing proxy:
 * `losingProxy(marker, options)` starts one (see `startReplyLosingProxy`), closed after the test.
 */
export function useHarnessesBehindLosingProxies() {
  const proxies: ReplyLosingProxy[] = [];
  // Registered before the harnesses' hook, so it runs after it: the bots stop while their Redis is still there.
  afterEach(async () => {
    for (const proxy of proxies.splice(0)) await proxy.close();
  });
  const harness = useHarnesses();
  const losingProxy = async (marker: string, options: { refuseForMs?: number } = {}) => {
    const proxy = await startReplyLosingProxy(inject('redisUrl'), marker, options);
    proxies.push(proxy);
    return proxy;
  };
  return { harness, losingProxy };
}

/**
 * Alice asks for a restart of the worker in staging (the model asks for it, then answers `answer`), and
 * Bob clicks Approve on its card; `proxy` (the bot's way to Redis) cut nothing before the click, and
 * cuts the reply it waits for after it. Answers the thread and when Bob clicked.
 */
export async function approveRestartBehind(h: Harness, proxy: ReplyLosingProxy, answer: string): Promise<{ threadTs: string; clickedAt: number }> {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: answer });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
  await h.settled();
  expect(proxy.cut()).toBe(false);

  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  const clickedAt = Date.now();
  expect((await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve })).status).toBe(200);
  await waitFor(() => proxy.cut(), { message: 'the decision reply to be cut' });
  return { threadTs, clickedAt };
}

/** A policy under which a restart needs two approvals: Bob's alone does not complete the step. */
export const TWO_APPROVALS_YAML = 'policy:\n  rules:\n    - name: two people\n      tools: [restart_service]\n      required: 2\n';
