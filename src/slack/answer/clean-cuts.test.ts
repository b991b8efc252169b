import { describe, expect, it } from 'vitest';
import { parseMarkdown } from '../format/parse-markdown.js';
import { cleanCutsOf } from './clean-cuts.js';

/** The text each clean cut of `markdown` would start the next message with: its reopening line, then the line at the cut. */
function cutsOf(markdown: string, window: { from: number; to: number } = { from: 0, to: markdown.length }): string[] {
  return cleanCutsOf({ rendered: markdown, tree: parseMarkdown(markdown) })(window).map((cut) => `${cut.closing ? `[${cut.closing}] ` : ''}${cut.reopening}${markdown.slice(cut.at, (markdown.indexOf('\n', cut.at) + 1 || markdown.length + 1) - 1)}`);
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
