import { appendAuditEvents, applyHistoryWrite, checkHistoryWrite, issueToken, namedWrite, serverClock, takeItem } from './redis-lua-helpers.js';

/**
 * KEYS[1] step, [2] complete-steps index, [3] expiry schedule, [4] reminder schedule, [5] audit
 * stream, [6] grants hash of the step's channel, [7] the thread's fence, [8] the workspace's open
 * steps, [9] the workspace's channels with grants, [10] escalation schedule.
 * ARGV[1] revision the change was computed from, [2] step JSON, [3] step id, [4] now, [5] flags
 * (`c` completed, `r` resumed, `x` closed), [6] fencing token or '', [7] grant id or '', [8] grant
 * JSON, [9] grant expiry (epoch ms), [10] audit cap, [11] the step's phase (kept in its own field
 * so an operator with redis-cli can see it), [12] the step's channel, [13] the step's new expiry
 * or '' and [14] its new reminder or '' (an edit moved them earlier), [15] its next escalation hop
 * or '' (an edit put a call back under a ladder that had stopped: written with the step, as
 * CREATE_STEP_SCRIPT writes the first hop, so no lost write leaves the ladder unswept), [16] the
 * deadline the change must come before (a person's action: 'expired' at or past it by the server's
 * clock) or '', [17] the clock to judge it by instead of `TIME` (tests) or ''.
 * Alone (a decision that does not complete the step, a close, an expiry): KEYS[11] this write's
 * attempt key, ARGV[18] attempt key ttl ms, [19…] audit (type, json) pairs. The attempt key (a
 * fresh token per call) says the write ran: ioredis sends a command again when its reply was lost,
 * and the resend answers 'committed' rather than find its own decision in the step and call it a
 * conflict (a first approval of two would be refused as its approver's second one).
 */
const commitStepAttempt = namedWrite({ key: 11, ttl: 18, answer: 'committed' });
export const COMMIT_STEP_SCRIPT = commitStepLua({
  auditFirst: 19,
  beforeWrite: `
${commitStepAttempt.ranBefore}`,
  afterWrite: `
${commitStepAttempt.record}`,
});

/**
 * COMMIT_STEP_SCRIPT's first 10 keys and 17 arguments and, when the transition completes the step
 * (flag `c`), the resume item queued for its thread in the same step: no decision that completes a
 * step is recorded without its resume. KEYS[11] queue, [12] lock, [13] index of threads with work,
 * [14] in-flight item, [15] ready list, [16] this write's attempt key.
 * ARGV[18] item, [19] lock ttl ms, [20] queue ttl ms, [21] thread key, [22] fence ttl ms, [23]
 * 'drain' (a free lock is taken: {'committed', token, first item, 1 if it was in flight already
 * (else 0)}) or 'hand-off' (a free thread is offered to the workers), [24] most hints kept, [25]
 * attempt key ttl ms, [26] token nonce, [27…] audit pairs.
 * The attempt key (a fresh token per call) keeps what the write did: the token of the lock it
 * took, or '' when it took none. ioredis sends a command again when its reply was lost; the resend
 * finds the key and answers as the first run did (the claim, while the lock still holds that
 * token) rather than find its own decision in the step, call it a conflict and strand the lock it
 * took until the lock lapses.
 */
export const COMMIT_STEP_AND_QUEUE_SCRIPT = commitStepLua({
  auditFirst: 27,
  beforeWrite: `
local earlier = redis.call('GET', KEYS[16])
if earlier then
  if earlier ~= '' and redis.call('GET', KEYS[12]) == earlier then
    -- Counted as left over unless it is this write's own item (the first run's answer is not kept).
    local first = redis.call('LINDEX', KEYS[14], 0)
    return {'committed', earlier, first, first ~= ARGV[18] and 1 or 0}
  end
  return 'committed'
end`,
  afterWrite: `
local taken = ''
if string.find(ARGV[5], 'c', 1, true) then
  redis.call('RPUSH', KEYS[11], ARGV[18])
  redis.call('PEXPIRE', KEYS[11], ARGV[20])
  redis.call('ZADD', KEYS[13], ARGV[4], ARGV[21])
  if redis.call('EXISTS', KEYS[12]) == 0 then
    if ARGV[23] == 'hand-off' then
      redis.call('RPUSH', KEYS[15], ARGV[21])
      redis.call('LTRIM', KEYS[15], -tonumber(ARGV[24]), -1)
    else
      ${issueToken({ fence: 7, now: 4, nonce: 26, ttl: 22 })}
      redis.call('SET', KEYS[12], token, 'PX', ARGV[19])
      taken = token
    end
  end
end
redis.call('SET', KEYS[16], taken, 'PX', ARGV[25])
if taken ~= '' then
  ${takeItem({ queue: 11, inflight: 14, ttl: 20 })}
  return {'committed', taken, item, leftover}
end`,
});

/** COMMIT_STEP_SCRIPT's body after `beforeWrite` (which may return), its audit pairs from ARGV[auditFirst], then `afterWrite` (which may return). */
function commitStepLua({ auditFirst, beforeWrite = '', afterWrite }: { auditFirst: number; beforeWrite?: string; afterWrite: string }): string {
  return `${beforeWrite}
local revision = redis.call('HGET', KEYS[1], 'revision')
if not revision then return 'not-found' end
if ARGV[6] ~= '' and redis.call('GET', KEYS[7]) ~= ARGV[6] then return 'fenced' end
if revision ~= ARGV[1] then return 'conflict' end
if ARGV[16] ~= '' then
  ${serverClock({ override: 17 })}
  if clock >= tonumber(ARGV[16]) then return 'expired' end
end
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'revision', tostring(tonumber(ARGV[1]) + 1), 'phase', ARGV[11])
if string.find(ARGV[5], 'c', 1, true) then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3]) end
if string.find(ARGV[5], 'r', 1, true) then redis.call('ZREM', KEYS[2], ARGV[3]) end
if ARGV[13] ~= '' then redis.call('ZADD', KEYS[3], ARGV[13], ARGV[3]) end
if ARGV[14] ~= '' then redis.call('ZADD', KEYS[4], ARGV[14], ARGV[3]) end
if ARGV[15] ~= '' then redis.call('ZADD', KEYS[10], ARGV[15], ARGV[3]) end
if string.find(ARGV[5], 'x', 1, true) then
  redis.call('ZREM', KEYS[3], ARGV[3])
  redis.call('ZREM', KEYS[4], ARGV[3])
  redis.call('ZREM', KEYS[8], ARGV[3])
end
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[6], ARGV[7], ARGV[8])
  -- The hash lives as long as its longest grant; GT never shortens it for a shorter one.
  redis.call('PEXPIREAT', KEYS[6], ARGV[9], 'GT')
  redis.call('PEXPIREAT', KEYS[6], ARGV[9], 'NX')
  redis.call('SADD', KEYS[9], ARGV[12])
  redis.call('PEXPIREAT', KEYS[9], ARGV[9], 'GT')
  redis.call('PEXPIREAT', KEYS[9], ARGV[9], 'NX')
end
${appendAuditEvents({ key: 5, cap: 10, first: auditFirst })}${afterWrite}
return 'committed'
`;
}

/**
 * A resume claim and its thread's save in one: KEYS[1] step, [2] complete-steps index, [3] thread,
 * [4] the thread's fence, [5] executing markers, [6] the thread's messages, [7] audit stream, [8]
 * this write's attempt key.
 * ARGV[1] the step's revision the claim was computed from, [2] step JSON, [3] step id, [4] token,
 * [5] phase, [6] thread JSON without its messages, [7] thread ttl ms (the step's too, when shorter
 * than what it has left), [8] '1' to drop the markers, [9] history write, [10] audit cap, [11]
 * attempt key ttl ms ('' for an unnamed write), [12…] audit pairs (an approval the claim turned
 * into a denial, or closed unchecked). Every check comes before any write. Returns the thread's new revision, or 'written' for a named write that ran before
 * (`namedWrite`).
 */
export const CLAIM_STEP_WITH_THREAD_SCRIPT = `
${namedWrite({ key: 8, ttl: 11 }).ranBefore}
local stepRevision = redis.call('HGET', KEYS[1], 'revision')
if not stepRevision then return 'not-found' end
if redis.call('GET', KEYS[4]) ~= ARGV[4] then return 'fenced' end
if stepRevision ~= ARGV[1] then return 'conflict' end
${checkHistoryWrite({ meta: 3, list: 6, history: 9 })}
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'revision', tostring(tonumber(ARGV[1]) + 1), 'phase', ARGV[5])
-- Resumed, the step is kept no longer than its thread: only a waiting step needs its deadline's life (\`stepRecordTtlMs\`).
redis.call('PEXPIRE', KEYS[1], ARGV[7], 'LT')
redis.call('ZREM', KEYS[2], ARGV[3])
${applyHistoryWrite({ meta: 3, list: 6, metaJson: 6, ttl: 7 })}
if ARGV[8] == '1' then redis.call('DEL', KEYS[5]) end
${appendAuditEvents({ key: 7, cap: 10, first: 12 })}
${namedWrite({ key: 8, ttl: 11 }).record}
return revision
`;

/**
 * KEYS[1] step, [2] thread, [3] expiry schedule, [4] reminder schedule, [5] channel's pending
 * index, [6] audit stream, [7] the thread's fence, [8] the thread's messages, [9] the workspace's
 * open steps (taken off when the step closes, in COMMIT_STEP_SCRIPT), [10] workspaces with open steps,
 * [11] escalation schedule, [12] this write's attempt key.
 * ARGV[1] token, [2] step JSON, [3] step ttl ms, [4] step id, [5] expiry or '', [6] reminder or '',
 * [7] created at, [8] thread JSON without its messages, [9] thread ttl ms, [10] audit cap, [11]
 * history write, [12] team id, [13] first escalation hop or '', [14] attempt key ttl ms ('' for an
 * unnamed write), [15…] audit pairs. Returns the thread's new revision, or 'written' for a named
 * write that ran before (`namedWrite`). The first hop is scheduled here with the rest: written
 * apart, a write lost after the step's would leave a ladder no sweep ever finds.
 */
export const CREATE_STEP_SCRIPT = `
${namedWrite({ key: 12, ttl: 14 }).ranBefore}
if redis.call('GET', KEYS[7]) ~= ARGV[1] then return 'fenced' end
${checkHistoryWrite({ meta: 2, list: 8, history: 11 })}
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'revision', '0', 'phase', 'pending')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[5] ~= '' then redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4]) end
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[4], ARGV[6], ARGV[4]) end
if ARGV[13] ~= '' then redis.call('ZADD', KEYS[11], ARGV[13], ARGV[4]) end
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[4])
-- Steps are kept for different times (\`stepRecordTtlMs\`): an index lives as long as its longest.
redis.call('PEXPIRE', KEYS[5], ARGV[3], 'GT')
redis.call('PEXPIRE', KEYS[5], ARGV[3], 'NX')
redis.call('ZADD', KEYS[9], ARGV[7], ARGV[4])
redis.call('PEXPIRE', KEYS[9], ARGV[3], 'GT')
redis.call('PEXPIRE', KEYS[9], ARGV[3], 'NX')
redis.call('SADD', KEYS[10], ARGV[12])
${applyHistoryWrite({ meta: 2, list: 8, metaJson: 8, ttl: 9 })}
${appendAuditEvents({ key: 6, cap: 10, first: 15 })}
${namedWrite({ key: 12, ttl: 14 }).record}
return revision
`;
