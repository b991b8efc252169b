import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitMessage } from './split-message.js';

/** What a reader gets across all chunks, ignoring the fences and whitespace splitting may add or drop. */
function content(text: string): string {
  return text.replaceAll('```', '').replace(/\s+/g, '');
}

describe('splitMessage', () => {
  it('keeps a short answer in one message', () => {
    expect(splitMessage('All three pods are healthy.')).toEqual(['All three pods are healthy.']);
  });

  it('sends nothing for an empty answer', () => {
    expect(splitMessage('')).toEqual([]);
    expect(splitMessage(' \n\n ')).toEqual([]);
  });

  it('splits between paragraphs first', () => {
    const first = 'a'.repeat(30);
    const second = 'b'.repeat(30);
    expect(splitMessage(`${first}\n\n${second}`, { maxLength: 40 })).toEqual([first, second]);
  });

  it('then between lines, then between words', () => {
    expect(splitMessage('line one here\nline two here\nline three', { maxLength: 30 })).toEqual(['line one here\nline two here', 'line three']);
    expect(splitMessage('alpha beta gamma delta epsilon', { maxLength: 20 })).toEqual(['alpha beta gamma', 'delta epsilon']);
  });

  it('cuts inside a word only when the word is longer than a message', () => {
    expect(splitMessage('x'.repeat(40), { maxLength: 16 })).toEqual(['x'.repeat(16), 'x'.repeat(16), 'x'.repeat(8)]);
  });

  it('closes a code block at the cut and reopens it in the next message', () => {
    const code = Array.from({ length: 8 }, (_, index) => `line ${index}`).join('\n');
    const chunks = splitMessage(`Output:\n\`\`\`\n${code}\n\`\`\`\nDone.`, { maxLength: 40 });
    expect(chunks).toEqual([
      'Output:\n```\nline 0\nline 1\nline 2\n```',
      '```\nline 3\nline 4\nline 5\nline 6\n```',
      '```\nline 7\n```\nDone.',
    ]);
  });

  it('does not end a message on a fence that opens an empty code block', () => {
    const chunks = splitMessage(`${'intro '.repeat(5)}\n\`\`\`\n${'y'.repeat(60)}\n\`\`\``, { maxLength: 40 });
    for (const chunk of chunks) expect(chunk).not.toMatch(/```\s*```/);
  });

  it('never splits an emoji, a link or an escaped character', () => {
    expect(splitMessage('🚀'.repeat(20), { maxLength: 17 }).every((chunk) => chunk === '🚀'.repeat(chunk.length / 2))).toBe(true);
    const link = '<https://example.com/runbook|the runbook>';
    // The space inside the label is the natural word break, and must not be used.
    expect(splitMessage(`see ${link} now`, { maxLength: 44 })).toEqual(['see', link, 'now']);
    expect(splitMessage(`${'a'.repeat(14)}&amp;&amp;`, { maxLength: 16 })).toEqual(['a'.repeat(14), '&amp;&amp;']);
  });

  it('does not cut a long word so that @here, @channel or @everyone becomes a word of its own', () => {
    const pingWord = /(^|[^\p{L}\p{N}])@(here|channel|everyone)(?![\p{L}\p{N}])/iu;
    // Cut before the `@`, the next message would start with it; cut after `@here`, one would end with it.
    for (const text of [`${'a'.repeat(16)}@here please`, `${'a'.repeat(16)}@everyone!`, `${'a'.repeat(10)}.@here${'y'.repeat(20)}`]) {
      const chunks = splitMessage(text, { maxLength: 16 });
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks.join('')).toBe(text);
      for (const chunk of chunks) expect(chunk).not.toMatch(pingWord);
    }
    // Elsewhere the same cut is the one a long word gets.
    expect(splitMessage(`${'a'.repeat(16)}@herb`, { maxLength: 16 })).toEqual(['a'.repeat(16), '@herb']);
  });

  it('rejects a limit too small to hold a reopened code block', () => {
    expect(() => splitMessage('text', { maxLength: 10 })).toThrow(RangeError);
  });

  it('keeps every chunk within the limit and loses nothing, for any text', () => {
    const piece = fc.oneof(
      fc.constantFrom('```', '\n', '\n\n', ' ', '<https://x.io|link text>', '<@U1ABC>', '&amp;', '🚀', '`', '*bold*', '• item\n'),
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.nat({ max: 300 }).map((length) => 'w'.repeat(length)),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 80 }), fc.integer({ min: 16, max: 300 }), (pieces, maxLength) => {
        const text = pieces.join('');
        const chunks = splitMessage(text, { maxLength });
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(maxLength);
          expect(chunk.trim()).not.toBe('');
          expect(chunk).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
        }
        expect(content(chunks.join('\n'))).toBe(content(text));
      }),
      { numRuns: 500 },
    );
  });
});
