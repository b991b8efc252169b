import { describe, expect, it } from 'vitest';
import { directMessageChannel } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, startHarness, threadReplies, waitFor, type Harness } from './harness.js';

const LADDER = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1]
      expiry: 1h
      escalation:
        - { after: 10m, remind: true }
        - { after: 20m, addApprovers: ["group:S0LEADS"] }
`;

const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } };
const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);

async function metricsOf(h: Harness): Promise<string> {
  return (await fetch(h.metricsUrl)).text();
}

/** A series' value summed over the processes (each counts what it did itself). */
async function seriesTotal(harnesses: Harness[], series: string): Promise<number> {
  let total = 0;
  for (const h of harnesses) {
    const line = (await metricsOf(h)).split('\n').find((candidate) => candidate.startsWith(`${series} `));
    total += line === undefined ? 0 : Number(line.slice(series.length + 1));
  }
  return total;
}

describe('escalation ladder', () => {
  it('reminds, then adds the fallback group, each hop once across two bot processes; the group is refused before its hop and accepted after', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const first = await startHarness({ extraYaml: LADDER, now: () => clock, sweepIntervalMs: 20 });
    const second = await first.startReplica();
    try {
      first.slack.setUsergroupUsers('S0LEADS', ['U0LEAD']);
      first.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted after the escalation.' });
      const threadTs = nextTs();
      await first.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
      const card = await waitFor(() => threadReplies(first, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
      const currentCard = () => first.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      expect(text(card)).toContain('Stage 1 of 3 · next: reminder');

      await first.click({ user: 'U0LEAD', cardTs: card.ts, threadTs, ...approve });
      const refusal = await waitFor(() => first.slack.callsTo('chat.postEphemeral')[0], { message: 'refusal before the hop' });
      expect(String(refusal.args.text)).toContain('Only <@U0OPS1> can approve this');

      clock += 11 * 60 * 1000;
      await waitFor(() => threadReplies(first, threadTs).find((message) => message.text.includes('Reminder (stage 2 of 3)')), { message: 'reminder hop' });
      await waitFor(() => text(currentCard()).includes('Stage 2 of 3 · next: escalates to <!subteam^S0LEADS>'), { message: 'stage 2 on the card' });
      clock += 10 * 60 * 1000;
      const escalated = await waitFor(() => threadReplies(first, threadTs).find((message) => message.text.includes('Escalated (stage 3 of 3)')), { message: 'escalation hop' });
      expect(escalated.text).toContain('<!subteam^S0LEADS> can now approve `restart_service`');
      await waitFor(() => text(currentCard()).includes('Stage 3 of 3'), { message: 'stage 3 on the card' });
      // Hops come from both processes' sweeps, not from Slack requests.
      await first.settled({ sweep: true });
      expect(threadReplies(first, threadTs).filter((message) => message.text.includes('Reminder (stage 2 of 3)'))).toHaveLength(1);
      expect(threadReplies(first, threadTs).filter((message) => message.text.includes('Escalated (stage 3 of 3)'))).toHaveLength(1);
      expect(text(currentCard())).toContain('<!subteam^S0LEADS>');
      const hops = (await first.auditEvents()).filter((event) => event.type === 'escalated');
      expect(hops.map((event) => (event.type === 'escalated' ? event.hop : 0))).toEqual([1, 2]);
      expect(await seriesTotal([first, second], 'countersign_escalations_total{stage="2"}')).toBe(1);
      expect(await seriesTotal([first, second], 'countersign_escalations_total{stage="3"}')).toBe(1);

      await first.click({ user: 'U0LEAD', cardTs: card.ts, threadTs, ...approve });
      await waitFor(() => threadReplies(first, threadTs).some((message) => message.text === 'Restarted after the escalation.'), { message: 'answer' });
      expect(first.invocations()).toHaveLength(1);
      expect(text(currentCard())).toContain('Approved by <@U0LEAD>');
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  it('sends a fallback approver named by user id a DM copy when the rule sends DMs, and accepts their decision from it', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const yaml = LADDER.replace('- { after: 10m, remind: true }\n        - { after: 20m, addApprovers: ["group:S0LEADS"] }', '- { after: 10m, addApprovers: [U0BOSS] }').replace(
      'expiry: 1h',
      'expiry: 1h\n      notify: { dmApprovers: true }',
    );
    const h = await startHarness({ extraYaml: yaml, now: () => clock, sweepIntervalMs: 20 });
    try {
      h.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted by the boss.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
      await waitFor(() => h.slack.messages(directMessageChannel('U0OPS1')).find((message) => cardButtons(message.blocks).length > 0), { message: 'DM copy to the approver' });
      expect(h.slack.messages(directMessageChannel('U0BOSS'))).toEqual([]);
      clock += 11 * 60 * 1000;
      const bossCopy = await waitFor(() => h.slack.messages(directMessageChannel('U0BOSS')).find((message) => cardButtons(message.blocks).length > 0), { message: 'DM copy to the fallback approver' });
      // A copy counts once it is recorded, just after it is posted; the thread's card names it then.
      await waitFor(() => threadReplies(h, threadTs).some((message) => /waiting for approval in a DM to [^"]*<@U0BOSS>/.test(text(message))), { message: 'the thread card naming the new copy' });
      const approve = cardButtons(bossCopy.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await postSlackInteraction({
        url: h.eventsUrl,
        signingSecret: SIGNING_SECRET,
        payload: blockActionsPayload({ user: 'U0BOSS', channel: directMessageChannel('U0BOSS'), messageTs: bossCopy.ts, teamId: TEAM_ID, ...approve }),
      });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted by the boss.'), { message: 'answer' });
      expect(h.invocations()).toHaveLength(1);
    } finally {
      await h.stop();
    }
  });

  it('counts expiries by rule', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const h = await startHarness({ extraYaml: LADDER, now: () => clock, sweepIntervalMs: 20 });
    try {
      h.openai.enqueue({ toolCalls: [restart] });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
      clock += 2 * 60 * 60 * 1000;
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('expired without a decision')), { message: 'expiry notice' });
      await h.settled({ sweep: true });
      expect(await seriesTotal([h], 'countersign_approvals_expired_total{rule="prod restarts"}')).toBe(1);
      // Expiry stays the last step: the hops it overtook are not made after it.
      expect((await h.auditEvents()).filter((event) => event.type === 'escalated')).toEqual([]);
    } finally {
      await h.stop();
    }
  });
});
