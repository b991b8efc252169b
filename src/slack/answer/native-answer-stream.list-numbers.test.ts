import type { List } from 'mdast';
import { describe, expect, it } from 'vitest';
import { MENTIONABLE_USER_IDS as MENTIONABLE, misreadMessages, streamAnswer } from '../../../test/helpers/streamed-answer-messages.js';
import { parseMarkdown, startOf } from '../format/parse-markdown.js';
import { safeMarkdown } from '../format/safe-markdown.js';
import { renderAnswer } from './render-answer.js';

/** The number a reader sees before each item of each ordered list, by the item's first line: CommonMark numbers items from the list's start. */
function shownNumbers(markdown: string): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const block of parseMarkdown(markdown).children) {
    if (block.type !== 'list' || !block.ordered) continue;
    const list = block as List;
    for (const [index, item] of list.children.entries()) {
      const line = markdown.slice(startOf(item), markdown.indexOf('\n', startOf(item))).replace(/^\d+[.)] /, '');
      numbers.set(line, (list.start ?? 1) + index);
    }
  }
  return numbers;
}

/** Streamed natively over several messages, each item shows the number it has in the whole answer; the messages are otherwise the answer's text. */
async function expectNumbersKept(answer: string): Promise<void> {
  const whole = shownNumbers(answer);
  const shown = await streamAnswer(answer);
  expect(shown.degraded).toBe(false);
  expect(shown.messages.length).toBeGreaterThan(1);
  const mismatches: string[] = [];
  for (const message of shown.messages) {
    for (const [line, number] of shownNumbers(message)) {
      if (whole.get(line) !== number) mismatches.push(`${JSON.stringify(line.slice(0, 24))} shown as ${number}, in the whole answer ${whole.get(line)}`);
    }
  }
  expect(mismatches).toEqual([]);
  // But for the numbers, the messages are the answer's text, each reading as the whole answer does.
  expect(misreadMessages({ rendered: safeMarkdown(answer, { mentionableUserIds: MENTIONABLE }), texts: shown.texts, closings: shown.closings })).toEqual([]);
}

describe('a numbered list rolled over into a new message keeps the numbers the whole answer shows', () => {
  it('items all written `1.` (CommonMark numbers them 1, 2, 3…): the next message does not start again at 1', async () => {
    const lines = Array.from({ length: 60 }, (_, index) => `1. Run \`step-${index} --now\` on **host-${index}**, then check the logs and the metrics of it`);
    const answer = `Steps:\n\n${lines.join('\n')}\n\nDone.\n`;
    await expectNumbersKept(answer);
  });

  it('an ordered list starting at 7 written 7) 10) 13)…: each item keeps the number the answer shows', async () => {
    const lines = Array.from({ length: 60 }, (_, index) => `${index * 3 + 7}) Run \`step-${index} --now\` on **host-${index}**, then check the logs and the metrics of it`);
    const answer = `${lines.join('\n')}\n`;
    await expectNumbersKept(answer);
  });
});

describe('a numbered list whose items’ other lines stand at the content column the written number sets', () => {
  it('items all written `1.`, each with a second paragraph at 3 spaces: no message ever shows an item numbered otherwise than the whole answer', async () => {
    // `10.` would set the column at 4: the second paragraph, at 3, would leave the item in a message starting with it.
    const lines = Array.from({ length: 30 }, (_, index) => `1. Run \`step-${index}\` on host-${index}, then check the logs\n\n   and the metrics of host-${index}, and the alerts`);
    const answer = `${lines.join('\n')}\n`;
    const whole = shownNumbers(answer);
    const shown = await streamAnswer(answer, { maxMessageLength: 1200 });
    const mismatches: string[] = [];
    // Every state a streamed message was shown in, not only the last.
    for (const state of shown.shown) {
      for (const [line, number] of shownNumbers(state)) if (whole.get(line) !== number) mismatches.push(`${JSON.stringify(line.slice(0, 24))} shown as ${number}, in the whole answer ${whole.get(line)}`);
    }
    expect(mismatches).toEqual([]);
    expect(shown.shown.length).toBeGreaterThan(1);
    // Past item 9 the list has no clean cut: the rest could not fit a message, and the answer is shown as edits.
    expect(shown.degraded).toBe(true);
    expect(shown.messages).toEqual(renderAnswer(answer, { mentionableUserIds: MENTIONABLE }));
  });
});
