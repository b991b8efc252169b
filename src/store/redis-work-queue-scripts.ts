import { issueToken, readThreadFunction, takeItem } from './redis-lua-helpers.js';

/**
 * KEYS[1] queue, [2] lock, [3] index of threads with work, [4] fence, [5] in-flight item, [6] this
 * write's attempt key. ARGV[1] item, [2] lock ttl ms, [3] queue ttl ms, [4] thread key, [5] now, [6]
 * fence ttl ms, [7] attempt key ttl ms, [8] token nonce. When the caller took the lock: {new token, the item to
 * handle first, in flight (TAKE_WORK_SCRIPT's rule), 1 if it was in flight already (else 0)}. Sent
 * again after a lost reply, it queues nothing twice and answers as the first run did
 * (COMMIT_STEP_AND_QUEUE_SCRIPT's attempt key), the item counted as left over unless it is its own.
 */
export const ENQUEUE_AND_LOCK_SCRIPT = `
local earlier = redis.call('GET', KEYS[6])
if earlier then
  if earlier ~= '' and redis.call('GET', KEYS[2]) == earlier then
    local first = redis.call('LINDEX', KEYS[5], 0)
    return {earlier, first, first ~= ARGV[1] and 1 or 0}
  end
  return false
end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('SET', KEYS[6], '', 'PX', ARGV[7])
  return false
end
${issueToken({ fence: 4, now: 5, nonce: 8, ttl: 6 })}
redis.call('SET', KEYS[2], token, 'PX', ARGV[2])
redis.call('SET', KEYS[6], token, 'PX', ARGV[7])
${takeItem({ queue: 1, inflight: 5, ttl: 3 })}
return {token, item, leftover}
`;

/**
 * KEYS[1] queue, [2] lock, [3] index of threads with work, [4] ready list, [5] this write's attempt
 * key. ARGV[1] item, [2] queue ttl ms, [3] thread key, [4] now, [5] most hints kept, [6] attempt key
 * ttl ms. A held lock needs no hint: its holder drains the queue before it lets go
 * (RELEASE_IF_IDLE_SCRIPT). Sent again after a lost reply, it queues nothing twice and answers as
 * the first run did (ENQUEUE_AND_LOCK_SCRIPT's attempt key): a second copy would be taken for an
 * item a stopped process left, and its turn run again.
 */
export const HAND_OFF_WORK_SCRIPT = `
local earlier = redis.call('GET', KEYS[5])
if earlier then return tonumber(earlier) end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('SET', KEYS[5], '0', 'PX', ARGV[6])
  return 0
end
redis.call('RPUSH', KEYS[4], ARGV[3])
redis.call('LTRIM', KEYS[4], -tonumber(ARGV[5]), -1)
redis.call('SET', KEYS[5], '1', 'PX', ARGV[6])
return 1
`;

/** KEYS[1] lock, [2] fence. ARGV[1] lock ttl ms, [2] now, [3] fence ttl ms, [4] token nonce. */
export const TRY_LOCK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
${issueToken({ fence: 2, now: 2, nonce: 4, ttl: 3 })}
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token
`;

/**
 * KEYS[1] lock, [2] fence, [3] queue, [4] in-flight item, [5] thread, [6] its message list. ARGV[1]
 * lock ttl ms, [2] now, [3] fence ttl ms, [4] in-flight ttl ms, [5] the shard's step key prefix,
 * [6] the 8 hex digits the step ids of this thread's shard start with (`newStepId`), [7] token nonce.
 * TRY_LOCK_SCRIPT, then TAKE_WORK_SCRIPT's take in the same step: {token, item or false, 1 if the
 * item was in flight already (else 0)}. When the item resumes a step of this thread's shard, it
 * also reads what the resume's first round trip would: {token, item, left over, step id, the
 * thread as READ_THREAD_SCRIPT gives it, the step as HGETALL gives it}.
 * The step key is built here, so it is not declared; it carries the thread's hash tag, so a
 * Cluster keeps it in the same slot.
 */
export const LOCK_AND_TAKE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
${issueToken({ fence: 2, now: 2, nonce: 7, ttl: 3 })}
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
${takeItem({ queue: 3, inflight: 4, ttl: 4 })}
if not item then return {token, item} end
local decoded = select(2, pcall(cjson.decode, item))
local stepId = type(decoded) == 'table' and decoded.kind == 'resume' and decoded.stepId
if type(stepId) ~= 'string' or #stepId ~= 40 or not string.match(stepId, '^[0-9a-f]+$') or string.sub(stepId, 1, 8) ~= ARGV[6] then return {token, item, leftover} end
${readThreadFunction()}
return {token, item, leftover, stepId, readThread(KEYS[5], KEYS[6]), redis.call('HGETALL', ARGV[5] .. stepId)}
`;

/**
 * KEYS[1] lock, [2] fence. ARGV[1] token, [2] ttl ms. A lock that lapsed while nobody took the
 * thread is taken back: the token is still the newest, so nothing happened in between. 1: renewed;
 * 0: another token holds the thread; -1: no token at all (Redis lost it), and none is written: the
 * holder's state is gone with it, so its writes stay refused and the next message takes the thread.
 */
export const EXTEND_LOCK_SCRIPT = `
local fence = redis.call('GET', KEYS[2])
if not fence then return -1 end
if fence ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** KEYS[1] queue, [2] in-flight item, [3] fence. ARGV[1] token, [2] in-flight ttl ms. The item already in flight comes first. */
export const TAKE_WORK_SCRIPT = `
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {'fenced'} end
${takeItem({ queue: 1, inflight: 2, ttl: 2 })}
if not item then return {'empty'} end
return {'item', item}
`;

/**
 * KEYS[1] queue, [2] lock, [3] in-flight item, [4] index of threads with work, [5] fence. ARGV[1]
 * token, [2] the finished item, [3] lock ttl ms, [4] thread key, [5] in-flight ttl ms. Finishes the
 * item and takes the next, or releases the lock when there is none; sent again after a lost reply
 * it finds the next item already in flight and returns it.
 */
export const FINISH_WORK_SCRIPT = `
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return {'fenced'} end
if redis.call('LINDEX', KEYS[3], 0) == ARGV[2] then redis.call('LPOP', KEYS[3]) end
local item = redis.call('LINDEX', KEYS[3], 0) or redis.call('LMOVE', KEYS[1], KEYS[3], 'LEFT', 'RIGHT')
if item then
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
  return {'item', item}
end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[4])
return {'released'}
`;

/**
 * KEYS[1] queue, [2] lock, [3] in-flight item, [4] index of threads with work, [5] fence, [6] ready
 * list. ARGV[1] token, [2] the finished item ('' for none), [3] thread key, [4] most hints kept. For a
 * holder that is stopping (`HandBack`): finishes the item and releases the lock, but leaves what is
 * left (queued, or in flight and not started) in place and offers the thread to the workers, as
 * HAND_OFF_WORK_SCRIPT does; the index keeps the thread, so a lost hint leaves it to the recovery
 * sweep. Sent again after a lost reply it finds the item finished and the lock gone (a second hint
 * only costs a worker a refused take).
 */
export const HAND_BACK_WORK_SCRIPT = `
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return {'fenced'} end
if ARGV[2] ~= '' and redis.call('LINDEX', KEYS[3], 0) == ARGV[2] then redis.call('LPOP', KEYS[3]) end
redis.call('DEL', KEYS[2])
if redis.call('LLEN', KEYS[1]) == 0 and redis.call('LLEN', KEYS[3]) == 0 then
  redis.call('ZREM', KEYS[4], ARGV[3])
  return {'released'}
end
redis.call('RPUSH', KEYS[6], ARGV[3])
redis.call('LTRIM', KEYS[6], -tonumber(ARGV[4]), -1)
return {'handed-back'}
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

/**
 * KEYS[1] a shard's index of threads with work. ARGV[1] the latest score taken (a cut-off in epoch
 * ms), [2] most threads answered, [3] most index entries looked at, [4] the shard's lock key prefix.
 * The oldest threads whose work was last queued at or before the cut-off and whose lock nobody
 * holds, with their scores, as ZRANGEBYSCORE … WITHSCORES gives them. A thread whose holder is alive
 * is passed over here rather than answered: its holder drains it, and however many such threads
 * are older, the answer still reaches a free one behind them. Read a page at a time, so a sweep
 * that finds free threads at once reads no further.
 * The lock keys are built here, so they are not declared; they carry the index's hash tag (a
 * shard's threads share it), so a Cluster keeps them in the same slot.
 */
export const STALLED_THREADS_SCRIPT = `
local wanted = tonumber(ARGV[2]) * 2
local budget = tonumber(ARGV[3])
local found = {}
local offset = 0
while offset < budget do
  local count = math.min(100, budget - offset)
  local entries = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', offset, count)
  for index = 1, #entries, 2 do
    if redis.call('EXISTS', ARGV[4] .. entries[index]) == 0 then
      found[#found + 1] = entries[index]
      found[#found + 1] = entries[index + 1]
      if #found >= wanted then return found end
    end
  end
  if #entries < count * 2 then break end
  offset = offset + count
end
return found
`;
