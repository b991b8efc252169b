/**
 * Lua scripts for the transitions that must be atomic across bot processes. Each returns the step
 * hash (HGETALL) so the caller renders the card from the state the transition produced.
 */

/**
 * KEYS[1] step hash. ARGV[1] approval id, ARGV[2] decision JSON, ARGV[3] approvals required,
 * ARGV[4] outcome, ARGV[5] deciding user. An approval short of the quorum is kept per approver
 * (`a:<approvalId>:<userId>`, counted in `n:<approvalId>`); the one that reaches it decides the call.
 */
export const DECIDE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not-found'} end
if redis.call('HEXISTS', KEYS[1], 'c:' .. ARGV[1]) == 0 then return {'not-found'} end
local decisionField = 'd:' .. ARGV[1]
if redis.call('HEXISTS', KEYS[1], decisionField) == 1 then
  return {'already-decided', '0', redis.call('HGETALL', KEYS[1])}
end
if redis.call('HGET', KEYS[1], 'phase') ~= 'pending' then
  return {'closed', '0', redis.call('HGETALL', KEYS[1])}
end
local required = tonumber(ARGV[3]) or 1
if ARGV[4] == 'approved' and required > 1 then
  local approvalField = 'a:' .. ARGV[1] .. ':' .. ARGV[5]
  if redis.call('HEXISTS', KEYS[1], approvalField) == 1 then
    return {'already-approved-by-you', '0', redis.call('HGETALL', KEYS[1])}
  end
  redis.call('HSET', KEYS[1], approvalField, ARGV[2])
  if redis.call('HINCRBY', KEYS[1], 'n:' .. ARGV[1], 1) < required then
    redis.call('HINCRBY', KEYS[1], 'revision', 1)
    return {'partial', '0', redis.call('HGETALL', KEYS[1])}
  end
end
redis.call('HSET', KEYS[1], decisionField, ARGV[2])
redis.call('HINCRBY', KEYS[1], 'revision', 1)
local completed = '0'
if redis.call('HINCRBY', KEYS[1], 'undecided', -1) <= 0 then
  redis.call('HSET', KEYS[1], 'phase', 'complete')
  completed = '1'
  -- Indexed until a process claims the resume, so a crash between here and the resume is found.
  redis.call('ZADD', KEYS[2], ARGV[6], ARGV[7])
end
return {'recorded', completed, redis.call('HGETALL', KEYS[1])}
`;

/** KEYS[1] step hash, KEYS[2] index of complete steps. ARGV[1] step id. */
export const CLAIM_RESUME_SCRIPT = `
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('HGET', KEYS[1], 'phase') ~= 'complete' then return false end
redis.call('HSET', KEYS[1], 'phase', 'resumed')
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Closes a pending step: every undecided call gets ARGV[1] (a decision JSON), then the phase moves
 * to `phase`. Returns false when the step was not pending, so a close racing the last click or
 * another close changes nothing.
 */
function closePendingStep(phase: 'superseded' | 'complete'): string {
  return `
if redis.call('HGET', KEYS[1], 'phase') ~= 'pending' then return false end
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, 2) == 'c:' then
    local decisionField = 'd:' .. string.sub(field, 3)
    if redis.call('HEXISTS', KEYS[1], decisionField) == 0 then
      redis.call('HSET', KEYS[1], decisionField, ARGV[1])
    end
  end
end
redis.call('HSET', KEYS[1], 'phase', '${phase}', 'undecided', '0')
redis.call('HINCRBY', KEYS[1], 'revision', 1)
return redis.call('HGETALL', KEYS[1])
`;
}

/** KEYS[1] step hash. ARGV[1] decision JSON applied to every undecided call. */
export const SUPERSEDE_SCRIPT = closePendingStep('superseded');

/**
 * KEYS[1] step hash, KEYS[2] expiry index, KEYS[3] index of complete steps. ARGV[1] decision JSON for
 * every undecided call, ARGV[2] step id, ARGV[3] now.
 */
export const EXPIRE_SCRIPT = `
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('HGET', KEYS[1], 'phase') == 'pending' then redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2]) end
${closePendingStep('complete')}`;

/**
 * KEYS[1] queue, KEYS[2] lock, KEYS[3] index of threads with work. ARGV[1] item, ARGV[2] lock token,
 * ARGV[3] lock ttl ms, ARGV[4] queue ttl ms, ARGV[5] thread key, ARGV[6] now.
 */
export const ENQUEUE_AND_LOCK_SCRIPT = `
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[5])
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return 1 end
return 0
`;

/** KEYS[1] lock. ARGV[1] token, ARGV[2] ttl ms. */
export const EXTEND_LOCK_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/**
 * KEYS[1] queue, KEYS[2] lock, KEYS[3] in-flight item, KEYS[4] index of threads with work. ARGV[1]
 * token, ARGV[2] lock ttl ms, ARGV[3] thread key. Returns 1 when the caller may stop draining: the
 * queue is empty and the lock is released, or another holder owns the lock. When work is left and
 * the lock expired, the caller takes it back rather than strand the queue.
 */
export const RELEASE_IF_IDLE_SCRIPT = `
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return 1 end
if redis.call('LLEN', KEYS[1]) > 0 or redis.call('LLEN', KEYS[3]) > 0 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
  return 0
end
if holder then redis.call('DEL', KEYS[2]) end
redis.call('ZREM', KEYS[4], ARGV[3])
return 1
`;
