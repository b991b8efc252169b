/**
 * KEYS[1] a once-key. ARGV[1] the claimant's token, [2] ttl ms. 1 when the key was free (it now
 * holds the token) or already holds this token, 0 when another claimant holds it. The token is
 * what tells a command resent after a lost reply (ioredis resends what it never heard back
 * about) from a second delivery: the resend finds its own write and still wins.
 */
export const CLAIM_ONCE_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then return 1 end
return 0
`;
