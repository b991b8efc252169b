import { cardButtons, waitFor, type Harness } from './harness.js';

/**
 * A person clicks "Approve & allow" on a card and submits the grant form the bot opens for it: `scope`
 * and `hours` (1 unless given) as chosen, "identical calls only" ticked when `identical`. The click goes
 * to `harness`, whose fake Slack records the form it opened. Answers the submission's HTTP response.
 */
export async function grantFromCard(
  harness: Harness,
  options: { card: { ts: string; blocks?: any[] }; threadTs: string; scope: 'thread' | 'channel'; hours?: number; identical?: boolean; user?: string },
) {
  const { card, threadTs, scope, hours = 1, identical = false, user = 'UBOB' } = options;
  const button = cardButtons(card.blocks).find((candidate) => candidate.actionId === 'countersign_grant')!;
  const opened = harness.slack.callsTo('views.open').length;
  await harness.click({ user, cardTs: card.ts, threadTs, ...button });
  const view = (await waitFor(() => harness.slack.callsTo('views.open')[opened], { message: 'grant form' })).args.view;
  const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
  return harness.submitView({
    user,
    view,
    values: {
      scope: { value: { type: 'radio_buttons', selected_option: option(scope) } },
      duration: { value: { type: 'static_select', selected_option: option(String(hours)) } },
      identical: { value: { type: 'checkboxes', selected_options: identical ? [option('identical')] : [] } },
    },
  });
}
