import { describe, expect, it } from 'vitest';
import { slackDate, userMention } from './mrkdwn-tokens.js';

describe('userMention', () => {
  it('mentions real user ids', () => {
    expect(userMention('U04BOB0002')).toBe('<@U04BOB0002>');
    expect(userMention('W0123ABCD')).toBe('<@W0123ABCD>');
  });

  it.each(['', 'here', 'U1> <!channel', 'u04bob0002', '@here'])('does not splice a malformed id %j into markup', (userId) => {
    expect(userMention(userId)).toBe('an unknown user');
  });
});

describe('slackDate', () => {
  it('renders in the reader’s time zone with a UTC fallback for notifications', () => {
    expect(slackDate({ epochMilliseconds: Date.UTC(2025, 0, 15, 15, 20, 31) })).toBe(
      '<!date^1736954431^{date_short_pretty} at {time}|2025-01-15 15:20 UTC>',
    );
    expect(slackDate({ epochMilliseconds: 0, format: '{time}' })).toBe('<!date^0^{time}|1970-01-01 00:00 UTC>');
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, 9e15])('copes with a corrupt timestamp (%d)', (epochMilliseconds) => {
    expect(slackDate({ epochMilliseconds })).toBe('at an unknown time');
  });
});
