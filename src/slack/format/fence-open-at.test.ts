import { describe, expect, it } from 'vitest';
import { fenceOpenAt } from './parse-markdown.js';

/** The fence open at the start of the line `line` of `source`. */
const openAtLine = (source: string, line: string) => fenceOpenAt(source, source.indexOf(line));

describe('fenceOpenAt: the prefix that keeps a reopened fence in its containers', () => {
  it('is empty for a fence at the top level', () => {
    expect(openAtLine('```sh\nx\ny\n```\n', 'y')).toEqual({ fence: '```', prefix: '', inOpeningLine: false });
  });

  it('is the indentation of a fence in a nested list item', () => {
    expect(openAtLine('- a\n  - b\n     ```sh\n     x\n     y\n     ```\n', '     y')?.prefix).toBe('     ');
  });

  it('turns list markers on the opening line into spaces of their width', () => {
    expect(openAtLine('10. ```sh\n    x\n    y\n    ```\n', '    y')?.prefix).toBe('    ');
    expect(openAtLine('- 1) ~~~\n     x\n     y\n     ~~~\n', '     y')).toEqual({ fence: '~~~', prefix: '     ', inOpeningLine: false });
  });

  it('keeps quote markers', () => {
    expect(openAtLine('> ```sh\n> x\n> y\n> ```\n', '> y')?.prefix).toBe('> ');
    expect(openAtLine('> - ```sh\n>   x\n>   y\n>   ```\n', '>   y')?.prefix).toBe('>   ');
  });

  it('gives no prefix for anything else before the fence (a tab)', () => {
    expect(openAtLine('-\t```sh\n\tx\n\ty\n\t```\n', '\ty')?.prefix).toBe('');
  });
});
