import { describe, expect, it } from 'vitest';
import { neutralisePings } from './neutralise-pings.js';

const ZWSP = '\u200B';

describe('neutralisePings', () => {
  it.each([
    ['<!channel> deploy finished', `@${ZWSP}channel deploy finished`],
    ['<!here|here> and <!everyone>', `@${ZWSP}here and @${ZWSP}everyone`],
    ['<!channel|@channel>', `@${ZWSP}channel`],
    ['<!subteam^S0123|@sre-oncall> please look', `@${ZWSP}sre-oncall please look`],
    ['<!subteam^S0123>', `@${ZWSP}group`],
    ['<!@here>', `@${ZWSP}here`],
    ['@here, @Channel; (@everyone)', `@${ZWSP}here, @${ZWSP}Channel; (@${ZWSP}everyone)`],
    ['*@here* _@channel_', `*@${ZWSP}here* _@${ZWSP}channel_`],
  ])('stops %j from notifying anyone', (mrkdwn, expected) => {
    expect(neutralisePings(mrkdwn)).toBe(expected);
  });

  it.each([
    ['links and formatting', '*done*: <https://ci.example.com/1|build 1> `ok`'],
    ['dates', 'at <!date^1736954415^{time}|15:20>'],
    ['email addresses and longer words', 'ops@here.example, @heresy, @channels'],
    ['channel links', 'in <#C05OPSCHAN|ops>'],
  ])('leaves %s alone', (_name, mrkdwn) => {
    expect(neutralisePings(mrkdwn)).toBe(mrkdwn);
  });

  it('keeps user mentions only of people who may be notified, or of anyone when the bot wrote the text', () => {
    const text = '<@U04BOB0002> and <@W123|alice> and <@U0CAROL>';
    expect(neutralisePings(text)).toBe(`@${ZWSP}U04BOB0002 and @${ZWSP}alice and @${ZWSP}U0CAROL`);
    expect(neutralisePings(text, { mentionableUserIds: ['U0CAROL', 'W123'] })).toBe(`@${ZWSP}U04BOB0002 and <@W123> and <@U0CAROL>`);
    expect(neutralisePings(text, { mentionableUserIds: 'anyone' })).toBe(text);
  });
});
