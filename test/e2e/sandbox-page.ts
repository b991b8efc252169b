import type { SandboxMessage, SandboxSnapshot, SandboxView } from '../../src/sandbox/sandbox-api.js';
import { waitFor } from './harness.js';

/**
 * What the sandbox page does, done from a test: read the snapshot, send what a person did, and
 * find a card's buttons the way the page renders them.
 */
export interface SandboxPage {
  state(): Promise<SandboxSnapshot>;
  post(path: string, body: unknown): Promise<{ status: number; body: any }>;
  /** Polls the snapshot until `probe` finds something. */
  waitFor<T>(probe: (snapshot: SandboxSnapshot) => T | undefined | false, message: string): Promise<T>;
  /** Clicks a button of a message as `user`, sending the element exactly as the bot sent it. */
  click(options: { user: string; message: SandboxMessage; actionId: string }): Promise<{ status: number; body: any }>;
}

export function sandboxPage(baseUrl: string): SandboxPage {
  const page: SandboxPage = {
    async state() {
      return (await (await fetch(`${baseUrl}/api/state`)).json()) as SandboxSnapshot;
    },
    async post(path, body) {
      const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: await response.json() };
    },
    waitFor: (probe, message) => waitFor(async () => probe(await page.state()), { timeoutMs: 10_000, message }),
    click({ user, message, actionId }) {
      const found = buttonsOf(message).find((button) => button.element.action_id === actionId);
      if (!found) throw new Error(`no ${actionId} button in ${JSON.stringify(message.blocks)}`);
      return page.post('/api/actions', {
        user,
        channel: message.channel,
        container: { type: 'message', messageTs: message.ts, ...(message.threadTs ? { threadTs: message.threadTs } : {}) },
        blockId: found.blockId,
        actionId,
        element: found.element,
      });
    },
  };
  return page;
}

export function buttonsOf(message: SandboxMessage): Array<{ blockId: string; element: Record<string, any> }> {
  return ((message.blocks ?? []) as any[])
    .filter((block) => block.type === 'actions')
    .flatMap((block) => (block.elements as any[]).map((element) => ({ blockId: String(block.block_id ?? ''), element })))
    .filter(({ element }) => element.type === 'button');
}

/** The bot's replies in a thread (everything but the parent). */
export function repliesIn(snapshot: SandboxSnapshot, threadTs: string): SandboxMessage[] {
  return snapshot.messages.filter((message) => message.threadTs === threadTs && message.ts !== threadTs);
}

export function cardIn(snapshot: SandboxSnapshot, threadTs: string): SandboxMessage | undefined {
  return repliesIn(snapshot, threadTs).find((message) => buttonsOf(message).length > 0);
}

export function viewOf(snapshot: SandboxSnapshot, user: string): SandboxView | undefined {
  return snapshot.views.findLast((view) => view.user === user);
}
