import { describe, expect, it } from 'vitest';
import { parseMarkdown } from '../format/parse-markdown.js';
import { cleanCutsOf } from './clean-cuts.js';

/** The text each clean cut of `markdown` would start the next message with: its reopening line, then the line at the cut. */
function cutsOf(markdown: string, window: { from: number; to: number } = { from: 0, to: markdown.length }): string[] {
  return cleanCutsOf({ rendered: markdown, tree: parseMarkdown(markdown) })(window).map((cut) => `${cut.closing ? `[${cut.closing}] ` : ''}${cut.reopening}${markdown.slice(cut.resume, (markdown.indexOf('\n', cut.at) + 1 || markdown.length + 1) - 1)}`);
}

describe('cleanCutsOf: where a new message can start', () => {
  it('at the start of each top-level block, its indentation included, with text after it', () => {
    expect(cutsOf('Intro\n\n## Heading\nText\n\n  Indented\n---\n\n')).toEqual(['## Heading', 'Text', '  Indented']);
  });

  it('not at a line that joins the block before it: a lazy line of a quote, a setext underline', () => {
    expect(cutsOf('> quoted\nlazy\n\nText\n===\n\nEnd\n')).toEqual(['Text', 'End']);
  });

  it('not right after a link reference definition, whose title may follow on the next line', () => {
    // The title, unclosed so far, reads as a paragraph of its own; closed, it is the definition's.
    expect(cutsOf('[a]: https://example.com\n"a title\n')).toEqual([]);
    expect(cutsOf('[a]: https://example.com\n"a title\nclosed"\n')).toEqual([]);
  });

  it('between the items of a top-level list, at each item’s own marker, never inside an item', () => {
    expect(cutsOf('1. one\n2. two\n\n   more of two\n   - nested\n   - nested\n3. three\n')).toEqual(['2. two', '3. three']);
  });

  it('an ordered list item starts the next message with the number it shows in the whole answer, its delimiter kept', () => {
    // CommonMark numbers items from the list's start: written all `1.`, or `7) 10) 13)`, they show 1, 2, 3 and 7, 8, 9.
    expect(cutsOf('1. one\n1. two\n1. three\n')).toEqual(['2. two', '3. three']);
    // Narrower than written: padded to the written width, the item's content column unchanged.
    expect(cutsOf('7) a\n10) b\n13) c\n')).toEqual([' 8) b', ' 9) c']);
    expect(cutsOf('98. a\n100. b\n')).toEqual([' 99. b']);
  });

  it('an item whose shown number is wider than the written one: only where it reads the same with that number', () => {
    const nine = Array.from({ length: 9 }, (_, index) => `1. item ${index + 1}\n`).join('');
    expect(cutsOf(`${nine}1. item 10\n`).slice(-2)).toEqual(['9. item 9', '10. item 10']);
    // A second paragraph at the written column of 3 leaves an item written `10.` (its column 4): no cut there.
    expect(cutsOf(`${nine}1. item 10\n\n   more of 10\n1. item 11\n`).slice(-2)).toEqual(['9. item 9', '11. item 11']);
  });

  it('not before a block whose first line reads otherwise without the text before it', () => {
    // After a paragraph's text the parser reads `10)` as no list, a message starting with it as one.
    expect(cutsOf('Text\n- 10) item\n')).toEqual([]);
    expect(cutsOf('Text\n\n- 10) item\n')).toEqual(['- 10) item']);
    expect(cutsOf('    indented code\n10) item\n')).toEqual([]);
    // Text, a heading or a fence reads the same there.
    expect(cutsOf('Steps:\n1. one\n2. two\nThen:\n```sh\nx\n```\n')).toEqual(['1. one', '2. two', '```sh']);
  });

  it('inside a top-level fenced code block, between two lines of code: closed with its fence, reopened with its opening line', () => {
    expect(cutsOf('  ~~~~ sh\n  a\n  b\n  ~~~~\nText\n')).toEqual(['[~~~~]   ~~~~ sh\n  b', 'Text']);
    // Unclosed: up to its last line.
    expect(cutsOf('```\na\nb\nc')).toEqual(['[```] ```\nb', '[```] ```\nc']);
  });

  it('never inside a code block in a list item or a quote, nor inside an indented one', () => {
    expect(cutsOf('- ```\n  a\n  b\n  ```\n> ```\n> a\n> b\n> ```\n\n    a\n    b\n')).toEqual(['> ```', '    a']);
  });

  it('only in the window asked for', () => {
    const markdown = 'One\n\nTwo\n\nThree\n\nFour\n';
    expect(cutsOf(markdown, { from: markdown.indexOf('Two'), to: markdown.indexOf('Three') })).toEqual(['Two', 'Three']);
    expect(cutsOf(markdown, { from: markdown.indexOf('Two') + 1, to: markdown.length })).toEqual(['Three', 'Four']);
  });
});
