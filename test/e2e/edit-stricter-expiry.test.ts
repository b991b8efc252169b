import { describe, expect, it } from 'vitest';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * An edit that moves a call under a rule with a shorter expiry (staging → prod) must not keep the
 * longer deadline of the rule the call was requested under: the prod rule's expiry, counted from
 * the request, is when nobody can approve it any more.
 */
const harness = useHarnesses();

const MINUTE = 60 * 1000;

const POLICY = `
policy:
  rules:
    - name: staging restarts
      tools: [restart_service]
      expiry: 1h
    - name: prod restarts
      tools: [restart_service]
      input:
        - { field: namespace, equals: prod }
      approvers: [U0CAROL]
      expiry: 10m
`;

const ephemeralsFor = (h: Harness, user: string) => h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.user === user).map((call) => String(call.args.text));

/** Alice asks for a staging restart; returns the card and a way to read it again. */
async function stagingCard(h: Harness) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const current = () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
  const click = (user: string, actionId: string) => h.click({ user, cardTs: card.ts, threadTs, ...cardButtons(current().blocks).find((button) => button.actionId === actionId)! });
  return { threadTs, card, current, click };
}

/** Bob edits the call to prod, where only Carol may approve: his submit is a new version, not an approval. */
async function editToProd(h: Harness, card: Awaited<ReturnType<typeof stagingCard>>): Promise<Response> {
  const opened = h.slack.callsTo('views.open').length;
  await card.click('UBOB', 'countersign_edit');
  const view = (await waitFor(() => h.slack.callsTo('views.open')[opened], { message: 'edit form' })).args.view;
  return h.submitView({ user: 'UBOB', view, values: fillForm(view, { Namespace: 'prod' }) });
}

const expiresText = (epochMilliseconds: number) => `expires <!date^${Math.floor(epochMilliseconds / 1000)}^`;

describe('an edit under a rule with a shorter expiry', () => {
  it("refuses an Approve after the stricter rule's expiry, tells the thread it expired and runs nothing", async () => {
    const requestedAt = Date.UTC(2026, 10, 21, 12, 0);
    const clock = { now: requestedAt };
    const h = await harness({ extraYaml: POLICY, now: () => clock.now, sweepIntervalMs: 3_600_000 });
    const card = await stagingCard(h);
    expect(JSON.stringify(card.card.blocks)).toContain(expiresText(requestedAt + 60 * MINUTE));

    clock.now += 2 * MINUTE;
    expect((await editToProd(h, card)).status).toBe(200);
    await waitFor(() => ephemeralsFor(h, 'UBOB').some((text) => text.includes('only <@U0CAROL> can approve it')), { message: 'the edit notice' });
    // The card says when the request now expires: ten minutes after it was made, as the prod rule has it.
    await waitFor(() => JSON.stringify(card.current().blocks).includes(expiresText(requestedAt + 10 * MINUTE)), { message: "the prod rule's expiry on the card" });

    clock.now = requestedAt + 11 * MINUTE;
    await card.click('U0CAROL', 'countersign_approve');
    await waitFor(() => ephemeralsFor(h, 'U0CAROL').find((text) => text.includes('This request expired before you acted')), { message: 'the refusal' });
    await waitFor(() => JSON.stringify(card.current().blocks).includes('Expired without a decision'), { message: 'the card marked expired' });
    await waitFor(() => threadReplies(h, card.threadTs).some((message) => message.text.includes('expired without a decision, so nothing was run')), { message: 'expiry notice' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
    const audit = await h.auditEvents();
    expect(audit.filter((event) => event.type === 'expired')).toHaveLength(1);
    expect(audit.some((event) => event.type === 'decision' && event.outcome === 'approved')).toBe(false);
  });

  it("is expired by the sweep at the stricter rule's deadline, without anyone clicking", async () => {
    const requestedAt = Date.UTC(2026, 10, 21, 12, 0);
    const clock = { now: requestedAt };
    const h = await harness({ extraYaml: POLICY, now: () => clock.now, sweepIntervalMs: 20 });
    const card = await stagingCard(h);
    clock.now += 2 * MINUTE;
    expect((await editToProd(h, card)).status).toBe(200);
    await waitFor(() => JSON.stringify(card.current().blocks).includes(expiresText(requestedAt + 10 * MINUTE)), { message: "the prod rule's expiry on the card" });

    clock.now = requestedAt + 11 * MINUTE;
    await waitFor(() => threadReplies(h, card.threadTs).some((message) => message.text.includes('expired without a decision, so nothing was run')), { message: 'expiry notice' });
    expect(JSON.stringify(card.current().blocks)).toContain('Expired without a decision');
    expect(cardButtons(card.current().blocks)).toEqual([]);
    await h.settled({ sweep: true });
    expect(h.invocations()).toEqual([]);
  });

  it("refuses an edit into a rule whose expiry has already passed, and the original stays approvable", async () => {
    const requestedAt = Date.UTC(2026, 10, 21, 12, 0);
    const clock = { now: requestedAt };
    const h = await harness({ extraYaml: POLICY, now: () => clock.now, sweepIntervalMs: 3_600_000 });
    const card = await stagingCard(h);

    clock.now = requestedAt + 11 * MINUTE;
    const response = await editToProd(h, card);
    const body = (await response.json()) as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(Object.values(body.errors).join(' ')).toContain('expire 10m after they are made');
    expect(JSON.stringify(card.current().blocks)).toContain(expiresText(requestedAt + 60 * MINUTE));

    await card.click('UBOB', 'countersign_approve');
    await waitFor(() => threadReplies(h, card.threadTs).some((message) => message.text === 'Restarted.'), { message: 'answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
  });
});
