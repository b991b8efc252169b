import { describe, expect, it } from 'vitest';
import { fenceOpenAt, indentedCodeAt } from './parse-markdown.js';

/** The fence open at the start of the line `line` of `source`. */
const openAtLine = (source: string, line: string) => fenceOpenAt(source, source.indexOf(line));

describe('fenceOpenAt: the prefix that keeps a reopened fence in its containers', () => {
  it('is empty for a fence at the top level', () => {
    expect(openAtLine('```sh\nx\ny\n```\n', 'y')).toEqual({ fence: '```', reopen: '```', prefix: '', inOpeningLine: false });
  });

  it('is the indentation of a fence in a nested list item, its content column', () => {
    expect(openAtLine('- a\n  - b\n    ```sh\n    x\n    y\n    ```\n', '    y')?.prefix).toBe('    ');
    // The fence's own indentation past the column (here 1) is left out too: see below.
    expect(openAtLine('- a\n  - b\n     ```sh\n     x\n     y\n     ```\n', '     y')?.prefix).toBe('    ');
  });

  it('keeps a fence’s own indentation where the next message, without the list items, still reads a fence there', () => {
    expect(openAtLine('  ```sh\n  x\n  y\n  ```\n', '  y')?.prefix).toBe('  ');
    expect(openAtLine('- a\n   ```sh\n   x\n   y\n   ```\n', '   y')?.prefix).toBe('   ');
    expect(openAtLine('> - a\n>\n>    ```sh\n>    x\n>    y\n', '>    y')?.prefix).toBe('>    ');
  });

  it('leaves out a fence’s own indentation where the next message would read an indented code block, whose less indented lines would not be code', () => {
    // The fence is 2 past the item's content column, 4 in; its lines need only the item's 2.
    expect(openAtLine('- Run:\n\n    ```\n  x\n  y\n    ```\n', '  y')?.prefix).toBe('  ');
    expect(openAtLine('> - a\n>\n>     ```sh\n>   x\n>   y\n', '>   y')?.prefix).toBe('>   ');
    expect(openAtLine('1. a\n\n      ~~~\n   x\n   y\n', '   y')?.prefix).toBe('   ');
  });

  it('reopens such a block with a fence longer than any run of its character so far, which no later fence closes', () => {
    // Its own closing fence, 4 in, would not close the reopened one; a later plain ``` would.
    expect(openAtLine('- Run:\n\n    ```\n  x\n  y\n    ```\n\n````\nz\n````\n', '  y')).toMatchObject({ fence: '```', reopen: '`````', prefix: '  ' });
    expect(openAtLine('1. a\n\n      ~~~\n   x\n   y\n', '   y')).toMatchObject({ fence: '~~~', reopen: '~~~~' });
    // Where the prefix keeps the fence's indentation, or the block is indented code either way, the fence is its own.
    expect(openAtLine('- a\n   ```sh\n   x\n   y\n   ```\n', '   y')?.reopen).toBe('```');
    expect(openAtLine('- a\n  - b\n     ```sh\n     x\n     y\n     ```\n', '     y')?.reopen).toBe('```');
  });

  it('turns list markers on the opening line into spaces of their width', () => {
    expect(openAtLine('10. ```sh\n    x\n    y\n    ```\n', '    y')?.prefix).toBe('    ');
    expect(openAtLine('- 1) ~~~\n     x\n     y\n     ~~~\n', '     y')).toEqual({ fence: '~~~', reopen: '~~~', prefix: '     ', inOpeningLine: false });
  });

  it('keeps quote markers', () => {
    expect(openAtLine('> ```sh\n> x\n> y\n> ```\n', '> y')?.prefix).toBe('> ');
    expect(openAtLine('> - ```sh\n>   x\n>   y\n>   ```\n', '>   y')?.prefix).toBe('>   ');
  });

  it('gives no prefix for anything else before the fence (a tab)', () => {
    expect(openAtLine('-\t```sh\n\tx\n\ty\n\t```\n', '\ty')?.prefix).toBe('');
  });
});

describe('fenceOpenAt: where a block ends', () => {
  it('is not inside a list item’s unclosed block at the blank line after it, where the item ends', () => {
    const source = '- ```sh\n  x\n\nAfterwards <@U0IN>\n';
    // The item (and its block) ended before the paragraph; nothing after the cut needs a fence.
    expect(fenceOpenAt(source, source.indexOf('\n\nAfterwards') + 1)).toBeUndefined();
    // A blank line inside the block, the item going on after it, is still inside.
    const goesOn = '- ```sh\n  x\n\n  y\n';
    expect(fenceOpenAt(goesOn, goesOn.indexOf('\n\n  y') + 1)?.fence).toBe('```');
  });

  it('is not inside a closed block right after its closing fence, nor after its line break', () => {
    const source = '```sh\nx\n```\nafter\n';
    expect(fenceOpenAt(source, source.indexOf('\nafter'))).toBeUndefined();
    expect(fenceOpenAt(source, source.indexOf('after'))).toBeUndefined();
    // The closing fence itself still needs the block closed there.
    expect(fenceOpenAt(source, source.indexOf('```\nafter'))?.fence).toBe('```');
  });
});

describe('indentedCodeAt: the prefix that keeps the rest of a cut line in its indented code block', () => {
  const at = (source: string, text: string) => indentedCodeAt(source, source.indexOf(text));
  it('is the block’s containers and 4 spaces', () => {
    expect(at('x\n\n    a b\n', 'b')).toEqual({ prefix: '    ' });
    expect(at('> x\n>\n>     a b\n', 'b')).toEqual({ prefix: '>     ' });
    expect(at('- x\n\n      a b\n', 'b')).toEqual({ prefix: '      ' });
  });

  it('is nothing outside indented code, or in a fenced block (fenceOpenAt’s)', () => {
    expect(at('x\n\na b\n', 'b')).toBeUndefined();
    expect(at('```\na b\n```\n', 'b')).toBeUndefined();
  });
});
