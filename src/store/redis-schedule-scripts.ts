/**
 * KEYS[1] a schedule of kept work (take-backs, card refreshes). ARGV[1] the member, [2] now, [3]
 * until. A sweep's claim on work it read as due: moves it to `until` only while it is still kept and
 * due by `now`, returning 1; 0 otherwise. Another sweep that read it due too then finds it moved past
 * its `now` and leaves it (an unconditional ZADD XX CH moved it again for any other `until`, so both
 * tried it). A resend after a lost reply finds it moved and answers 0: it is tried a pause later.
 */
export const CLAIM_KEPT_SCRIPT = `
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at or tonumber(at) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`;

/**
 * KEYS[1] reminder schedule, [2] the step's reminder claim. ARGV[1] step id, [2] now, [3] until, [4]
 * claimant, [5] lease ms. Claims a reminder due by `now` for its sender: moves it to `until` (when it
 * is due again unless `FINISH_REMINDER_SCRIPT` takes it off), records the claimant and when it was due
 * in the claim, with a TTL of the lease (so the lease runs by Redis's clock, from this moment, not from
 * the sweep's start), and returns that time; false when it is not there, not due, or claimed by
 * another sender whose lease still runs (its `until` may have passed: it is still sending). A resend
 * after a lost reply finds its own claim and returns it again.
 */
export const CLAIM_REMINDER_SCRIPT = `
local holder = redis.call('HMGET', KEYS[2], 'claimant', 'due')
if holder[1] == ARGV[4] then return holder[2] end
if holder[1] then return false end
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then return false end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], 'claimant', ARGV[4], 'due', due)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return due
`;

/**
 * KEYS[1] a step's reminder claim. ARGV[1] claimant, [2] lease ms. 1 when the claim is still the
 * claimant's, its lease renewed from now; 0 when it ran out or another sender claimed the reminder.
 */
export const KEEP_REMINDER_SCRIPT = `
if redis.call('HGET', KEYS[1], 'claimant') ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS[1] a step's reminder claim. ARGV[1] claimant. Deletes the claim while it is still the claimant's. */
export const RELEASE_REMINDER_SCRIPT = `
if redis.call('HGET', KEYS[1], 'claimant') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * KEYS[1] reminder schedule, [2] the step's reminder claim. ARGV[1] step id, [2] the claim's until,
 * [3] claimant. Takes a claimed reminder off the schedule while it is still at its claim's time (one
 * an edit put back on since stays), and deletes the claim while it is still the claimant's.
 */
export const FINISH_REMINDER_SCRIPT = `
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if at and tonumber(at) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) end
if redis.call('HGET', KEYS[2], 'claimant') == ARGV[3] then redis.call('DEL', KEYS[2]) end
return 0
`;
