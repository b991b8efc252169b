import type { types } from '@slack/bolt';
import { SLACK_LIMITS, truncateText } from './limits.js';

/** Room kept for the "…and N more" line, so adding it never breaks a limit itself. */
const MORE_LINE_ROOM = 40;

/**
 * One-line list entries (mrkdwn, one per line) packed into as few sections as fit: Slack refuses
 * a whole message over one section longer than 3,000 characters, and twenty list lines with
 * permalinks are longer than that. Lines go in order, each whole in one section; lines past what
 * one message holds (50 blocks, ~12,000 characters of block text) are left out and counted in a
 * closing "…and N more". A line longer than a section is cut: callers keep their lines short.
 */
export function lineSections({
  lines,
  maxBlocks = SLACK_LIMITS.blocksPerMessage,
  maxTextLength = SLACK_LIMITS.messageBlocksTextLength,
}: {
  lines: readonly string[];
  maxBlocks?: number;
  maxTextLength?: number;
}): types.KnownBlock[] {
  const sections: string[][] = [];
  let current: string[] = [];
  let currentLength = 0;
  let total = 0;
  let shown = 0;
  for (const raw of lines) {
    const line = truncateText(raw, SLACK_LIMITS.sectionTextLength);
    const joined = current.length === 0 ? line.length : currentLength + 1 + line.length;
    const opensSection = joined > SLACK_LIMITS.sectionTextLength;
    const blocksNeeded = sections.length + 1 + (opensSection ? 1 : 0) + 1;
    if (blocksNeeded > maxBlocks || total + line.length + MORE_LINE_ROOM > maxTextLength) break;
    if (opensSection) {
      sections.push(current);
      current = [line];
      currentLength = line.length;
    } else {
      current.push(line);
      currentLength = joined;
    }
    total += line.length + 1;
    shown += 1;
  }
  if (current.length > 0) sections.push(current);
  const blocks: types.KnownBlock[] = sections.map((section) => ({ type: 'section', text: { type: 'mrkdwn', text: section.join('\n'), verbatim: true } }));
  const hidden = lines.length - shown;
  if (hidden > 0) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `…and ${hidden} more` }] });
  return blocks;
}
