import { describe, expect, it } from 'vitest';
import { codeOffsets, expectShownRight, MENTIONABLE_USER_IDS as MENTIONABLE, streamAnswer } from '../../../test/helpers/streamed-answer-messages.js';
import { safeMarkdown } from '../format/safe-markdown.js';

const lines = (count: number, line: (index: number) => string) => Array.from({ length: count }, (_, index) => line(index)).join('\n');

describe('native streaming: a long answer of ordinary shape rolls over into several messages, natively', () => {
  it('20 paragraphs', async () => {
    const answer = `${lines(20, (index) => `Paragraph ${index}: ${'the deploy **went** fine, see `kubectl get pods` and <@U0IN>. '.repeat(5)}`).replaceAll('\n', '\n\n')}\n`;
    const shown = await streamAnswer(answer);
    expectShownRight(answer, shown);
    expect(shown.degraded).toBe(false);
    expect(shown.messages.length).toBeGreaterThan(2);
    // Each message ends at the end of a paragraph and the next starts with one.
    for (const message of shown.messages.slice(1)) expect(message).toMatch(/^Paragraph \d+:/);
  });

  it('a 60-item numbered list, each message after the first starting at its item’s own number', async () => {
    const answer = `Steps:\n\n${lines(60, (index) => `${index + 1}. Run \`step-${index} --now\` on **host-${index}**, then check the ${'logs and the metrics '.repeat(3)}`)}\n\nDone.\n`;
    const shown = await streamAnswer(answer);
    expectShownRight(answer, shown);
    expect(shown.degraded).toBe(false);
    expect(shown.messages.length).toBeGreaterThan(1);
    for (const message of shown.messages.slice(1)) {
      const number = Number(/^(\d+)\. /.exec(message)?.[1]);
      expect(answer).toContain(`\n${number}. Run \`step-${number - 1} `);
    }
  });

  it('a 10 KB top-level code block, closed with its own fence and reopened with its opening line', async () => {
    const answer = `The log:\n\n\`\`\`text\n${lines(320, (index) => `${String(index).padStart(3)} GET /api <@U0IN> **${index}** 200`)}\n\`\`\`\n\nThat is **all**.\n`;
    const shown = await streamAnswer(answer);
    expectShownRight(answer, shown);
    expect(shown.degraded).toBe(false);
    expect(shown.messages.length).toBeGreaterThan(2);
    expect(answer.length).toBeGreaterThan(10_000);
    for (const message of shown.messages.slice(1)) expect(message).toMatch(/^```text\n/);
  });
});

describe('native streaming: what the rollover that patched text at any cut got wrong', () => {
  it('a list item’s fence 4 in, before a later fence as long as the one it was reopened with: its code lines stay code', async () => {
    const answer = `- Run:\n\n    \`\`\`\n${lines(10, (index) => `  run **step** ${index} <@U0IN>`)}\n    \`\`\`\n\nExpected output:\n\n\`\`\`\`\nping <@U0IN> **now**\n\`\`\`\`\n`;
    expectShownRight(answer, await streamAnswer(answer, { maxMessageLength: 200 }), 200);
    // With room for the item, it is streamed, the list item in one message.
    const roomy = await streamAnswer(answer, { maxMessageLength: 400 });
    expect(roomy.degraded).toBe(false);
    expectShownRight(answer, roomy, 400);
  });

  it('a code span across a line break, the break where a message would end: it stays code', async () => {
    // The span's first line ends the paragraph's first 390 characters: a message of 400 is full there.
    const span = 'see `grep -r\n<@U0IN> **x**` and\n';
    const filler = lines(8, (index) => `words of line ${index} go on for a while here`);
    const answer = `${filler.padStart(390 - span.indexOf('\n') - 2, '.')}\n${span}${filler}\n\nAfter.\n`;
    expect(codeOffsets(safeMarkdown(answer, { mentionableUserIds: MENTIONABLE }))(answer.indexOf('<@U0IN>'))).toBe(true);
    const shown = await streamAnswer(answer, { maxMessageLength: 400 });
    expectShownRight(answer, shown, 400);
    // The paragraph fits no message: the answer is shown as edits, the span as code.
    expect(shown.degraded).toBe(true);
  });

  it('a quote’s code block, then another block: the fence of one never closes the other', async () => {
    const answer = `> \`\`\`\n${lines(4, (index) => `> quoted ${index} <@U0IN>`)}\n> \`\`\`\n\n${lines(6, (index) => `Text ${index} **bold** and more words.`).replaceAll('\n', '\n\n')}\n\n\`\`\`\n${lines(8, (index) => `code ${index} **not bold** <@U0IN>`)}\n\`\`\`\n\nAfter **the** code.\n`;
    const shown = await streamAnswer(answer, { maxMessageLength: 200 });
    expectShownRight(answer, shown, 200);
    expect(shown.degraded).toBe(false);
    expect(shown.messages.length).toBeGreaterThan(2);
  });

  it('a quote’s code block reopened with a longer fence, then a top-level code block cut in two: each closed with its own fence', async () => {
    // The quote's block stands 4 in (2 past its item's content column), which the old rollover reopened with a longer fence.
    const answer = `> - Run:\n>\n>     \`\`\`\n${lines(6, (index) => `>   quoted ${index} <@U0IN>`)}\n>     \`\`\`\n\nThen **this**:\n\n\`\`\`sh\n${lines(12, (index) => `run ${index} **not bold** <@U0IN>`)}\n\`\`\`\n\nAfter **the** code <@U0IN>.\n`;
    const shown = await streamAnswer(answer, { maxMessageLength: 200 });
    expectShownRight(answer, shown, 200);
    expect(shown.degraded).toBe(false);
  });

  it('a list item’s paragraph after a blank line in the item: no message starts inside the item, where it would read as code', async () => {
    // The items' content stands 4 in (after `10. `): read without its item, a paragraph of it would be an indented code block.
    const answer = `Steps to follow, in this order, for the service to come back up again:\n\n${lines(4, (index) => `${index + 10}. Item ${index}\n\n    then **restart** the ${'service '.repeat(8)}and tell <@U0IN>`)}\n\nAfter.\n`;
    const shown = await streamAnswer(answer, { maxMessageLength: 160 });
    expectShownRight(answer, shown, 160);
    expect(shown.degraded).toBe(false);
    expect(shown.messages.length).toBeGreaterThan(2);
    for (const message of shown.messages.slice(1)) expect(message).toMatch(/^(?:\d+\. Item|After)/);
  });

  it('a list after an indented code block, whose first line the parser reads there as text: no message starts with it', async () => {
    // micromark reads `10) …` right after an indented code block as a paragraph's text; at a message's start, as a list item.
    const answer = `    ${'log line '.repeat(12)}\n10) # not a heading <@U0IN>\n    \`\`\`\n**bold** <@U0IN>\n    \`\`\`\n`;
    const shown = await streamAnswer(answer, { maxMessageLength: 160 });
    expectShownRight(answer, shown, 160);
  });

  it('a block whose closing fence is indented more than its opening one', async () => {
    const answer = `Run:\n\n\`\`\`sh\n${lines(12, (index) => `echo **${index}** <@U0IN>`)}\n   \`\`\`\n\nAfterwards **restart** it and tell <@U0IN>.\n`;
    const shown = await streamAnswer(answer, { maxMessageLength: 150 });
    expectShownRight(answer, shown, 150);
    expect(shown.degraded).toBe(false);
    expect(shown.messages.length).toBeGreaterThan(2);
    expect(shown.messages.at(-1)).toMatch(/^Afterwards/);
    // In a list item: the closing fence 5 in (3 past the item's content column) closes it there, not in a message without the item.
    const inItem = `${'An introduction to the steps below. '.repeat(3)}\n\n- Run:\n  \`\`\`sh\n${lines(6, (index) => `  echo **${index}** <@U0IN>`)}\n     \`\`\`\n\nAfterwards **restart** it and tell <@U0IN>.\n`;
    const shownInItem = await streamAnswer(inItem, { maxMessageLength: 200 });
    expectShownRight(inItem, shownInItem, 200);
    expect(shownInItem.degraded).toBe(false);
  });

  it('an unclosed fence in a list item, the item longer than a message', async () => {
    const answer = `- Run:\n  \`\`\`sh\n${lines(10, (index) => `  echo step ${index} <@U0IN> **x**`)}\n\nAfterwards **restart** the service and tell <@U0IN>.\n`;
    const shown = await streamAnswer(answer, { maxMessageLength: 150 });
    expectShownRight(answer, shown, 150);
    expect(shown.degraded).toBe(true);
    // With room for the item: the paragraph after it starts a message of its own, as text.
    const roomy = await streamAnswer(answer, { maxMessageLength: 400 });
    expectShownRight(answer, roomy, 400);
  });

  it('a quoted code line longer than a message: shown as edits, the mention in it code', async () => {
    const longLine = lines(700, (index) => `k${index}=v`).replaceAll('\n', ' ');
    const answer = `The failing request:\n\n> \`\`\`\n> ${longLine} cc <@U0IN>\n> \`\`\`\n\nDone.\n`;
    const shown = await streamAnswer(answer);
    expectShownRight(answer, shown);
    expect(shown.degraded).toBe(true);
  });
});

describe('native streaming: a 66 KB one-line paragraph', () => {
  it('gives up native streaming at once, without holding the event loop', async () => {
    const answer = lines(11_000, (index) => `w${index % 10} `).replaceAll('\n', '').padEnd(66_000, 'x');
    const deltas = Array.from({ length: Math.ceil(answer.length / 100) }, (_, index) => answer.slice(index * 100, (index + 1) * 100));
    const started = performance.now();
    const shown = await streamAnswer(answer, { deltas });
    expectShownRight(answer, shown);
    const elapsed = performance.now() - started;
    expect(shown.degraded).toBe(true);
    expect(shown.closings.size).toBe(0);
    // 0.5 s on a quiet machine (the old rollover took 33 s of the event loop); a generous bound for loaded ones.
    expect(elapsed).toBeLessThan(10_000);
  });
});
