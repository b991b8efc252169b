/**
 * Lua scripts for the writes that must be atomic across bot processes. Audit events ride in the
 * same script as the change they record (`AUDIT_EVENTS`), so the trail is complete whenever the
 * state is. Fenced writes compare the caller's token with the thread's newest first.
 */

/** Appends the (type, json) pairs from ARGV[first] on to the audit stream KEYS[key], capped at ARGV[cap]. */
function appendAuditEvents({ key, cap, first }: { key: number; cap: number; first: number }): string {
  return `
for i = ${first}, #ARGV, 2 do
  redis.call('XADD', KEYS[${key}], 'MAXLEN', '~', ARGV[${cap}], '*', 'type', ARGV[i], 'event', ARGV[i + 1])
end`;
}

/**
 * Issues the thread's next fencing token into KEYS[fence]: larger than any token before it, even if
 * the counter expired (it never goes below the current time in milliseconds).
 */
function issueToken({ fence, now, ttl }: { fence: number; now: number; ttl: number }): string {
  return `
local last = tonumber(redis.call('GET', KEYS[${fence}]) or '0') or 0
local token = string.format('%.0f', math.max(last + 1, tonumber(ARGV[${now}])))
redis.call('SET', KEYS[${fence}], token, 'PX', ARGV[${ttl}])`;
}

/**
 * KEYS[1] step, [2] complete-steps index, [3] expiry schedule, [4] reminder schedule, [5] audit
 * stream, [6] grants hash of the step's channel, [7] the thread's fence.
 * ARGV[1] revision the change was computed from, [2] step JSON, [3] step id, [4] now, [5] flags
 * (`c` completed, `r` resumed, `x` closed), [6] fencing token or '', [7] grant id or '', [8] grant
 * JSON, [9] grant expiry (epoch ms), [10] audit cap, [11] the step's phase (kept in its own field
 * so an operator with redis-cli can see it), [12…] audit (type, json) pairs.
 */
export const COMMIT_STEP_SCRIPT = `
local revision = redis.call('HGET', KEYS[1], 'revision')
if not revision then return 'not-found' end
if ARGV[6] ~= '' and redis.call('GET', KEYS[7]) ~= ARGV[6] then return 'fenced' end
if revision ~= ARGV[1] then return 'conflict' end
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'revision', tostring(tonumber(ARGV[1]) + 1), 'phase', ARGV[11])
if string.find(ARGV[5], 'c', 1, true) then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3]) end
if string.find(ARGV[5], 'r', 1, true) then redis.call('ZREM', KEYS[2], ARGV[3]) end
if string.find(ARGV[5], 'x', 1, true) then
  redis.call('ZREM', KEYS[3], ARGV[3])
  redis.call('ZREM', KEYS[4], ARGV[3])
end
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[6], ARGV[7], ARGV[8])
  -- The hash lives as long as its longest grant; GT never shortens it for a shorter one.
  redis.call('PEXPIREAT', KEYS[6], ARGV[9], 'GT')
  redis.call('PEXPIREAT', KEYS[6], ARGV[9], 'NX')
end
${appendAuditEvents({ key: 5, cap: 10, first: 12 })}
return 'committed'
`;

/**
 * KEYS[1] step, [2] thread, [3] expiry schedule, [4] reminder schedule, [5] channel's pending
 * index, [6] audit stream, [7] the thread's fence.
 * ARGV[1] token, [2] step JSON, [3] step ttl ms, [4] step id, [5] expiry or '', [6] reminder or '',
 * [7] created at, [8] thread JSON, [9] thread ttl ms, [10] audit cap, [11…] audit pairs.
 */
export const CREATE_STEP_SCRIPT = `
if redis.call('GET', KEYS[7]) ~= ARGV[1] then return 'fenced' end
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'revision', '0', 'phase', 'pending')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[5] ~= '' then redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4]) end
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[4], ARGV[6], ARGV[4]) end
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[4])
redis.call('PEXPIRE', KEYS[5], ARGV[3])
redis.call('SET', KEYS[2], ARGV[8], 'PX', ARGV[9])
${appendAuditEvents({ key: 6, cap: 10, first: 11 })}
return 'ok'
`;

/** KEYS[1] thread, [2] fence, [3] executing markers. ARGV[1] token, [2] thread JSON, [3] ttl ms, [4] '1' to drop the markers. */
export const SAVE_THREAD_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'fenced' end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if ARGV[4] == '1' then redis.call('DEL', KEYS[3]) end
return 'ok'
`;

/** KEYS[1] executing markers, [2] fence, [3] audit stream. ARGV[1] token, [2] call id, [3] marker JSON, [4] ttl ms, [5] audit cap, [6…] audit pairs. */
export const MARK_EXECUTING_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'fenced' end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
${appendAuditEvents({ key: 3, cap: 5, first: 6 })}
return 'ok'
`;

/** KEYS[1] executing markers, [2] audit stream. ARGV[1] call id, [2] marker JSON, [3] audit cap, [4…] audit pair. */
export const FINISH_EXECUTING_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
${appendAuditEvents({ key: 2, cap: 3, first: 4 })}
return 'ok'
`;

/**
 * KEYS[1] grants hash, [2] audit stream. ARGV[1] grant id, [2] the grant's JSON as read (the audit
 * event was built from it), [3] audit cap, [4…] audit pair. 0 when the grant is gone or changed.
 */
export const REVOKE_GRANT_SCRIPT = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
${appendAuditEvents({ key: 2, cap: 3, first: 4 })}
return 1
`;

/**
 * KEYS[1] queue, [2] lock, [3] index of threads with work, [4] fence. ARGV[1] item, [2] lock ttl
 * ms, [3] queue ttl ms, [4] thread key, [5] now, [6] fence ttl ms. Returns the new token when the
 * caller took the lock.
 */
export const ENQUEUE_AND_LOCK_SCRIPT = `
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
${issueToken({ fence: 4, now: 5, ttl: 6 })}
redis.call('SET', KEYS[2], token, 'PX', ARGV[2])
return token
`;

/** KEYS[1] lock, [2] fence. ARGV[1] lock ttl ms, [2] now, [3] fence ttl ms. */
export const TRY_LOCK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
${issueToken({ fence: 2, now: 2, ttl: 3 })}
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token
`;

/**
 * KEYS[1] lock, [2] fence. ARGV[1] token, [2] ttl ms. A lock that lapsed while nobody took the
 * thread is taken back: the token is still the newest, so nothing happened in between.
 */
export const EXTEND_LOCK_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** KEYS[1] queue, [2] in-flight item, [3] fence. ARGV[1] token, [2] in-flight ttl ms. */
export const TAKE_WORK_SCRIPT = `
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {'fenced'} end
local item = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
if not item then return {'empty'} end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return {'item', item}
`;

/** KEYS[1] in-flight item, [2] fence. ARGV[1] token. */
export const FINISH_WORK_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'fenced' end
redis.call('LPOP', KEYS[1])
return 'ok'
`;

/**
 * KEYS[1] queue, [2] lock, [3] in-flight item, [4] index of threads with work, [5] fence. ARGV[1]
 * token, [2] lock ttl ms, [3] thread key. When work is left, the caller keeps (or takes back) the
 * lock rather than strand the queue.
 */
export const RELEASE_IF_IDLE_SCRIPT = `
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return 'fenced' end
if redis.call('LLEN', KEYS[1]) > 0 or redis.call('LLEN', KEYS[3]) > 0 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
  return 'more'
end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[3])
return 'released'
`;
