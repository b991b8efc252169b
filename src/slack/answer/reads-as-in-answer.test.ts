import { describe, expect, it } from 'vitest';
import { parseMarkdown } from '../format/parse-markdown.js';
import { codeRangesOf, readsAsInAnswer } from './reads-as-in-answer.js';

const reads = (answer: string, message: string, { bodyAt = 0, answerAt = 0 } = {}) => readsAsInAnswer({ answerCode: codeRangesOf(parseMarkdown(answer)), message, bodyAt, answerAt });

describe('readsAsInAnswer', () => {
  it('holds for a message that shows the same code and text as the answer there', () => {
    const answer = 'Intro `x`\n\n```sh\nrun <@U1>\n```\n\nText **y**\n';
    expect(reads(answer, answer)).toBe(true);
    expect(reads(answer, answer.slice(answer.indexOf('```sh')), { answerAt: answer.indexOf('```sh') })).toBe(true);
    // A code block reopened before the answer's text: that line is the message's own.
    const rest = answer.indexOf('run');
    expect(reads(answer, `\`\`\`sh\n${answer.slice(rest)}`, { bodyAt: 6, answerAt: rest })).toBe(true);
  });

  it('fails for a message that shows the answer’s code as text, or its text as code', () => {
    const answer = '- Item\n\n    text of the item <@U1>\n';
    const item = answer.indexOf('    text');
    // Without its item, the item's paragraph is an indented code block.
    expect(reads(answer, answer.slice(item), { answerAt: item })).toBe(false);
    const code = '```\na\nb <@U1>\n```\n';
    expect(reads(code, code.slice(code.indexOf('b')), { answerAt: code.indexOf('b') })).toBe(false);
  });
});
