import { appendAuditEvents, decodedJson, serverClock } from './redis-lua-helpers.js';

/**
 * KEYS[1] the stamp of one write's grant, named by the write's attempt, in the shard that stores the
 * grant (whose clock is asked). ARGV[1] the clock to answer instead of `TIME` (tests) or '', [2] how
 * long the stamp is kept (ms, as the attempt's own key). The time, in epoch ms, that shard's scripts
 * judge deadlines by: a grant is stamped by it (`stampGrant`), as its start is judged by it
 * (MARK_EXECUTING_SCRIPT). Read once per attempt: a resend under the same attempt, which the commit
 * finds done and does not write again, gets the first answer, so what it logs is the end stored.
 */
export const STORE_CLOCK_SCRIPT = `
local kept = redis.call('GET', KEYS[1])
if kept then return tonumber(kept) end
${serverClock({ override: 1 })}
redis.call('SET', KEYS[1], clock, 'PX', ARGV[2])
return clock
`;

/**
 * KEYS[1] a channel's grants hash. ARGV[1] the clock to judge expiry by instead of `TIME` (tests)
 * or ''. Removes the grants over by that clock, the one their `grant-created` records stamped their
 * end by (so the trail still says when each ended), and returns the JSON of the others. A reader's
 * own clock never removes one: one running fast would take live grants from every replica. One the
 * script cannot read (`decodedJson`) is removed too: MARK_EXECUTING_SCRIPT could never start a call
 * on it, so listed, the gate would let calls through on it that are then refused, never asking a
 * human, and `/countersign grants` would show it as active for good.
 */
export const LIST_GRANTS_SCRIPT = `
${serverClock({ override: 1 })}
local live = {}
local stored = redis.call('HGETALL', KEYS[1])
for i = 1, #stored, 2 do
  local grant = ${decodedJson('stored[i + 1]')}
  if type(grant) ~= 'table' or type(grant.expiresAt) ~= 'number' or grant.expiresAt <= clock then
    redis.call('HDEL', KEYS[1], stored[i])
  else
    table.insert(live, stored[i + 1])
  end
end
return live
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
