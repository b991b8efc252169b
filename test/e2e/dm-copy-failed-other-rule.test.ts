import { describe, expect, it } from 'vitest';
import { directMessageChannel } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();
const APPROVALS = 'C0APPROVALS';

/**
 * Two rules that send their cards away from the thread: prod restarts to #approvals (for the ops
 * group), staging restarts to a DM to U0DBA. A turn asks for one of each, so one card carries both.
 * README: "The thread's card keeps its buttons unless the copies reach everyone who may decide …
 * so a copy Slack refused … leaves them in the thread" (and of `dmApprovers`: "or each DM copy fails
 * with `missing_scope` and the thread's card keeps its buttons"). When the DM to U0DBA fails, the
 * #approvals copy (of the other rule, for other people) is taken as reaching U0DBA too, so the
 * thread's card loses its buttons and U0DBA's call has no card anywhere that they can decide it on.
 */
const TWO_RULES = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: ["group:S0OPS"]
      notify: { thread: false, channels: [${APPROVALS}] }
    - name: staging restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: staging }]
      approvers: [U0DBA]
      notify: { thread: false, dmApprovers: true }
`;

const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);

describe('a card whose DM copy failed, beside a copy in an approval channel of another rule', () => {
  it("keeps the buttons on the thread's card for the approver the DM did not reach", async () => {
    const h = await harness({ extraYaml: TWO_RULES });
    h.slack.failWhen('conversations.open', () => true, { error: 'missing_scope' });
    h.openai.enqueue(
      {
        toolCalls: [
          { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } },
          { name: 'restart_service', arguments: { service: 'db-proxy', namespace: 'staging' } },
        ],
      },
      { text: 'Done.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api in prod and db-proxy in staging', ts: threadTs });
    await waitFor(() => h.slack.messages(APPROVALS).find((message) => text(message).includes('Requested in')), { message: 'the #approvals copy' });
    await h.settled();
    // No DM reached U0DBA.
    expect(h.slack.messages(directMessageChannel('U0DBA'))).toEqual([]);
    const threadCard = threadReplies(h, threadTs).find((message) => text(message).includes('Approval needed'))!;
    expect(threadCard).toBeDefined();
    expect(threadCard.channel ?? CHANNEL).toBe(CHANNEL);
    // U0DBA must have somewhere to decide the staging restart: the thread's card keeps its buttons.
    expect(cardButtons(threadCard.blocks).length).toBeGreaterThan(0);
    // For that call only: the prod restart is decided in #approvals, as its rule asks.
    const [prod, staging] = threadCard.blocks!.filter((block: any) => block.type === 'section' && block.text.text.includes('restart_service'));
    expect(JSON.stringify(prod)).toContain('prod');
    expect(JSON.stringify(staging)).toContain('staging');
    const buttonsAfter = (section: unknown) => threadCard.blocks![threadCard.blocks!.indexOf(section as never) + 1] as { type: string };
    expect(buttonsAfter(prod).type).toBe('context');
    expect(buttonsAfter(staging).type).toBe('actions');
    expect(text(threadCard)).toContain('Also waiting for approval in');
  });

  it("shows in #approvals only the call its rule sends there, not the other rule's input or buttons", async () => {
    const h = await harness({ extraYaml: TWO_RULES });
    h.openai.enqueue(
      {
        toolCalls: [
          { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } },
          { name: 'restart_service', arguments: { service: 'db-proxy', namespace: 'staging' } },
        ],
      },
      { text: 'Done.' },
    );
    await h.mention({ user: 'UALICE', text: 'restart api in prod and db-proxy in staging', ts: nextTs() });
    const copy = await waitFor(() => h.slack.messages(APPROVALS).find((message) => text(message).includes('Requested in')), { message: 'the #approvals copy' });
    const dm = await waitFor(() => h.slack.messages(directMessageChannel('U0DBA')).find((message) => text(message).includes('Requested in')), { message: "U0DBA's DM copy" });
    await h.settled();
    const shown = h.slack.messages(APPROVALS).find((message) => message.ts === copy.ts)!;
    expect(text(shown)).toContain('prod');
    expect(text(shown)).not.toContain('db-proxy');
    expect(text(shown)).toContain('1 more call of this request is not sent here');
    // Buttons for the prod restart only.
    expect(shown.blocks!.filter((block: any) => block.type === 'actions')).toHaveLength(1);
    const dmShown = h.slack.messages(directMessageChannel('U0DBA')).find((message) => message.ts === dm.ts)!;
    expect(text(dmShown)).toContain('db-proxy');
    const dmCalls = dmShown.blocks!.filter((block: any) => block.type === 'section' && block.text.text.includes('restart_service'));
    expect(dmCalls).toHaveLength(1);
    expect(JSON.stringify(dmCalls)).not.toContain('prod');
  });
});
