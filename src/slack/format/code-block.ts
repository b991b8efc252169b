import { ZERO_WIDTH_SPACE } from './escape-mrkdwn.js';

export const CODE_FENCE = '```';

/** Characters `codeBlock` may add around the content: the fences and a guard on each side. */
export const CODE_BLOCK_OVERHEAD = 2 * CODE_FENCE.length + 2 * ZERO_WIDTH_SPACE.length;

/**
 * Already-escaped mrkdwn (see `untrustedTextToMrkdwn`) inside a code block. A backtick at either
 * edge would merge with the fence into a longer one, so it gets a zero-width space in between.
 */
export function codeBlock(content: string): string {
  const start = content.startsWith('`') ? ZERO_WIDTH_SPACE : '';
  const end = content.endsWith('`') ? ZERO_WIDTH_SPACE : '';
  return `${CODE_FENCE}${start}${content}${end}${CODE_FENCE}`;
}
