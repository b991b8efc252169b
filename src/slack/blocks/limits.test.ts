import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findBlockKitViolations, measureBlockText, truncateText } from './limits.js';

const mrkdwn = (text: string) => ({ type: 'mrkdwn', text });
const plain = (text: string) => ({ type: 'plain_text', text });
/** With the `u` flag a surrogate range matches only unpaired halves. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

describe('truncateText', () => {
  it('leaves text that fits untouched', () => {
    expect(truncateText('restart payments-api', 20)).toBe('restart payments-api');
  });

  it('ends cut text with an ellipsis within the limit', () => {
    expect(truncateText('restart payments-api now', 12)).toBe('restart pay…');
    expect(truncateText('restart payments-api now', 12, { ellipsis: '...' })).toBe('restart p...');
  });

  it('never leaves half an emoji behind', () => {
    // "🚀" is two UTF-16 code units; cutting between them would render as a replacement character.
    expect(truncateText('ab🚀cd', 4)).toBe('ab…');
  });

  it('never exceeds the limit and keeps surrogate pairs whole, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 0, max: 250 }), (text, maxLength) => {
        const result = truncateText(text, maxLength);
        expect(result.length).toBeLessThanOrEqual(maxLength);
        expect(result).not.toMatch(LONE_SURROGATE);
        if (result !== text) expect(text.startsWith(result.slice(0, -1))).toBe(true);
      }),
    );
  });
});

describe('findBlockKitViolations', () => {
  it('accepts a card built from the sample approval message', () => {
    const blocks = [
      { type: 'header', block_id: 'h', text: plain(':lock: Approval needed') },
      { type: 'section', block_id: 's', text: mrkdwn('*restart*'), fields: [mrkdwn('a'), mrkdwn('b')] },
      {
        type: 'actions',
        block_id: 'a',
        elements: [{ type: 'button', action_id: 'approve', text: plain('Approve'), style: 'primary', value: 'x' }],
      },
      { type: 'context', elements: [mrkdwn('Requested by <@U1>')] },
      { type: 'divider' },
    ];
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual([]);
  });

  it('reports each broken limit with the path to it', () => {
    const blocks = [
      { type: 'header', text: plain('h'.repeat(151)) },
      { type: 'section', text: mrkdwn('s'.repeat(3001)) },
      { type: 'section', fields: Array.from({ length: 11 }, () => mrkdwn('f')) },
      { type: 'context', elements: [mrkdwn('')] },
      {
        type: 'actions',
        block_id: 'b'.repeat(256),
        elements: [{ type: 'button', action_id: 'a', text: plain('Approve'.repeat(11)), value: 'v'.repeat(2001), style: 'green' }],
      },
    ];
    expect(findBlockKitViolations(blocks, { surface: 'modal' })).toEqual([
      '/blocks/0/text/text: 151 characters (max 150)',
      '/blocks/1/text/text: 3001 characters (max 3000)',
      '/blocks/2/fields: 11 items (max 10)',
      '/blocks/3/elements/0/text: text is empty',
      '/blocks/4/block_id: 256 characters (max 255)',
      '/blocks/4/elements/0/text/text: 77 characters (max 75)',
      '/blocks/4/elements/0/value: 2001 characters (max 2000)',
      '/blocks/4/elements/0/style: style must be "primary" or "danger"',
    ]);
  });

  it('allows 100 blocks in a modal but only 50 in a message', () => {
    const blocks = Array.from({ length: 51 }, () => ({ type: 'divider' }));
    expect(findBlockKitViolations(blocks, { surface: 'modal' })).toEqual([]);
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual(['/blocks: 51 blocks (max 50 in a message)']);
  });

  it('reports a message whose blocks hold too much text in total', () => {
    const blocks = Array.from({ length: 5 }, () => ({ type: 'section', text: mrkdwn('x'.repeat(2500)) }));
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual(['/blocks: 12500 characters of text in one message (max 12000)']);
    expect(findBlockKitViolations(blocks, { surface: 'modal' })).toEqual([]);
  });

  it('reports duplicate block ids, which Slack rejects', () => {
    const blocks = [
      { type: 'divider', block_id: 'same' },
      { type: 'divider', block_id: 'same' },
    ];
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual(['/blocks/1/block_id: duplicate block_id "same"']);
  });

  it('checks modal inputs: labels, placeholders, options and max_length', () => {
    const blocks = [
      {
        type: 'input',
        label: mrkdwn('Replicas'),
        element: {
          type: 'static_select',
          action_id: 'value',
          placeholder: plain('p'.repeat(151)),
          options: [{ text: plain('o'.repeat(76)), value: 'v'.repeat(76) }],
        },
      },
      { type: 'input', label: plain('Notes'), element: { type: 'plain_text_input', action_id: 'value', max_length: 3001 } },
      {
        type: 'input',
        label: plain('Pick'),
        element: { type: 'checkboxes', action_id: 'c', options: Array.from({ length: 11 }, (_, index) => ({ text: plain(`o${index}`), value: `${index}` })) },
      },
    ];
    expect(findBlockKitViolations(blocks, { surface: 'modal' })).toEqual([
      '/blocks/0/label/type: must be plain_text',
      '/blocks/0/element/placeholder/text: 151 characters (max 150)',
      '/blocks/0/element/options/0/text/text: 76 characters (max 75)',
      '/blocks/0/element/options/0/value: 76 characters (max 75)',
      '/blocks/1/element/max_length: max_length must be 0–3000',
      '/blocks/2/element/options: 11 items (max 10)',
    ]);
  });

  it('leaves block types it does not know alone', () => {
    expect(findBlockKitViolations([{ type: 'rich_text', elements: [] }], { surface: 'message' })).toEqual([]);
  });
});

describe('measureBlockText', () => {
  it('counts every text string, however deeply nested', () => {
    const blocks = [
      { type: 'section', text: mrkdwn('12345'), fields: [mrkdwn('123')] },
      { type: 'actions', elements: [{ type: 'button', text: plain('12'), value: 'not text' }] },
      { type: 'markdown', text: '1234' },
    ];
    expect(measureBlockText(blocks)).toBe(14);
  });
});
