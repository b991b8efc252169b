import { appendAuditEvents, applyHistoryWrite, checkHistoryWrite, namedWrite, readThreadFunction } from './redis-lua-helpers.js';

/**
 * KEYS[1] thread, [2] fence, [3] executing markers, [4] the thread's messages, [5] audit stream,
 * [6] this save's attempt key. ARGV[1] token, [2] thread JSON without its messages, [3] ttl ms, [4]
 * '1' to drop the markers, [5] history write, [6] audit cap, [7] attempt key ttl ms ('' for an
 * unnamed save), [8…] audit pairs. Returns the thread's new revision, or 'written' for a named save
 * that ran before (`namedWrite`).
 */
export const SAVE_THREAD_SCRIPT = `
${namedWrite({ key: 6, ttl: 7 }).ranBefore}
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'fenced' end
${checkHistoryWrite({ meta: 1, list: 4, history: 5 })}
${applyHistoryWrite({ meta: 1, list: 4, metaJson: 2, ttl: 3 })}
if ARGV[4] == '1' then redis.call('DEL', KEYS[3]) end
${appendAuditEvents({ key: 5, cap: 6, first: 8 })}
${namedWrite({ key: 6, ttl: 7 }).record}
return revision
`;

/** KEYS[1] thread, [2] its messages. ARGV[1] thread JSON without messages, [2] ttl ms, [3] history write (a rewrite). 0 when the thread exists. */
export const CREATE_THREAD_IF_ABSENT_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
${checkHistoryWrite({ meta: 1, list: 2, history: 3 })}
${applyHistoryWrite({ meta: 1, list: 2, metaJson: 1, ttl: 2 })}
return revision
`;

/**
 * KEYS[1] thread, [2] its messages. A thread saved before histories were lists is one JSON string
 * (`legacy`); it becomes a hash and a list on its next save.
 */
export const READ_THREAD_SCRIPT = `
${readThreadFunction()}
return readThread(KEYS[1], KEYS[2])
`;
