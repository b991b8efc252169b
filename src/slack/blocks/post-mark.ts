import { randomUUID } from 'node:crypto';
import type { types } from '@slack/bolt';

/**
 * `blocks` with a mark no other post carries, in the first block's `block_id`: what tells this post apart
 * from another with the same text and blocks (the same card posted again by another process), when its
 * reply is lost and the thread is searched for it (`findUnconfirmedPost`'s `carrying`). An update that
 * draws the blocks again drops it; only the search after the post needs it.
 */
export function withPostMark(blocks: readonly types.KnownBlock[]): { blocks: types.KnownBlock[]; mark: string } {
  const mark = `countersign_post_${randomUUID()}`;
  const [first, ...rest] = blocks;
  return { blocks: first === undefined ? [] : [{ ...first, block_id: mark }, ...rest], mark };
}
