import { describe, expect, it } from 'vitest';
import { findBlockKitViolations } from './limits.js';
import { noticeBlocks } from './notice-blocks.js';

describe('noticeBlocks', () => {
  it('puts the notice in a context block, a shape no answer has (answers are plain text)', () => {
    expect(noticeBlocks(':robot_face: `restart_service` ran without a card: auto-approve mode is on here.')).toEqual([
      { type: 'context', elements: [{ type: 'mrkdwn', text: ':robot_face: `restart_service` ran without a card: auto-approve mode is on here.' }] },
    ]);
  });

  it('adds Try again when asked, and stays within Slack limits for a notice of any length', () => {
    const blocks = noticeBlocks(`:warning: ${'x'.repeat(5000)}`, { retryButton: true });
    expect(blocks.map((block) => block.type)).toEqual(['context', 'actions']);
    expect(findBlockKitViolations(blocks, { surface: 'message' })).toEqual([]);
  });
});
