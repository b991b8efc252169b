import { describe, expect, it } from 'vitest';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, waitFor } from './harness.js';
import { useHarnessesBehindLosingProxies } from './lost-decision-reply.test-support.js';

/**
 * Review (unsettled decisions, 68676cf / 3c8895c): an Edit submit moves a call under a rule routed to
 * #approvals only (thread: false). Its write runs in Redis, the reply is lost and Redis stays
 * unreachable past the form's (zero) store wait: the editor is told "I could not confirm whether your
 * edit was recorded ... The card will show the outcome once Redis answers again". Once Redis answers,
 * the thread's card is drawn again (version 2, "Waiting for approval in #approvals"), but the copy in
 * #approvals, which a recorded edit posts (postCopiesForEdit in decide-call's publish), is never
 * posted: the prod lead, the only one who may approve version 2, is never shown the request.
 */
const APPROVALS = 'C0APPROVALS';
const POLICY = `
policy:
  rules:
    - name: staging restarts
      tools: [restart_service]
      approvers: [U0STG]
    - name: prod restarts
      tools: [restart_service]
      input:
        - { field: namespace, equals: prod }
      approvers: [U0LEAD]
      notify: { thread: false, channels: [${APPROVALS}] }
`;
const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);

const { harness, losingProxy } = useHarnessesBehindLosingProxies();

describe('an edit routed elsewhere whose write landed but whose outcome was not known', () => {
  it('gets its copy in the new rule\'s channel once Redis answers, as a recorded edit does', async () => {
    // Only the edit's write names this service.
    const marker = 'worker-edit-q7z';
    const proxy = await losingProxy(marker, { refuseForMs: 2_500 });
    const h = await harness({ redisUrl: proxy.url, extraYaml: POLICY });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    await h.settled();

    const edit = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_edit')!;
    await h.click({ user: 'U0STG', cardTs: card.ts, threadTs, ...edit });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'views.open' })).args.view;
    const response = await h.submitView({ user: 'U0STG', view, values: fillForm(view, { Namespace: 'prod', Service: marker }) });
    const body = (await response.json().catch(() => ({}))) as { errors?: Record<string, string> };
    expect(proxy.cut(), 'the edit write ran in Redis and its reply was lost').toBe(true);
    expect(JSON.stringify(body.errors ?? {})).toContain('could not confirm whether your edit was recorded');

    // The edit did land: once Redis answers, the thread's card shows version 2, routed to #approvals.
    await waitFor(() => proxy.back(), { message: 'Redis to be reachable again' });
    await waitFor(() => text(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)).includes(marker), { timeoutMs: 20_000, message: 'the thread card to show the edit' });
    await h.settled();
    const threadCard = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(text(threadCard)).toContain('Version 2');
    const inApprovals = h.slack.messages(APPROVALS).find((message) => text(message).includes('Requested in'));
    expect(inApprovals, 'no copy in #approvals: the only approver of version 2 is never shown it').toBeDefined();
  }, 60_000);
});
