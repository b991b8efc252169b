import { describe, expect, it } from 'vitest';
import { findBlockKitViolations, SLACK_LIMITS } from './limits.js';
import { lineSections } from './line-sections.js';

const sectionTexts = (blocks: ReturnType<typeof lineSections>) => blocks.flatMap((block) => (block.type === 'section' && block.text ? [block.text.text] : []));

describe('lineSections', () => {
  it('packs lines in order into sections Slack accepts, each line whole', () => {
    const lines = Array.from({ length: 20 }, (_, index) => `• line ${index} ${'x'.repeat(240)}`);
    const blocks = lineSections({ lines });
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual([]);
    expect(blocks.length).toBeGreaterThan(1);
    expect(sectionTexts(blocks).join('\n')).toBe(lines.join('\n'));
  });

  it('leaves out what one message cannot hold and says how many', () => {
    const lines = Array.from({ length: 200 }, (_, index) => `• line ${index} ${'x'.repeat(2900)}`);
    const blocks = lineSections({ lines });
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual([]);
    const shown = sectionTexts(blocks).join('\n').split('\n').length;
    expect(JSON.stringify(blocks.at(-1))).toContain(`…and ${200 - shown} more`);
  });

  it('cuts a line longer than a section', () => {
    const blocks = lineSections({ lines: ['x'.repeat(5000)] });
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual([]);
    expect(sectionTexts(blocks)[0]).toHaveLength(SLACK_LIMITS.sectionTextLength);
  });
});
