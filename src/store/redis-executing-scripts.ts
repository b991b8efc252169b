import { appendAuditEvents, decodedJson, namedWrite, serverClock } from './redis-lua-helpers.js';

/**
 * KEYS[1] executing markers, [2] fence, [3] audit stream, [4] the grants hash of the call's grant
 * (any key of the shard without one), [5] this write's attempt key. ARGV[1] token, [2] call id, [3]
 * marker JSON, [4] ttl ms, [5] grant id ('' when the call is not cleared by a grant), [6] the clock
 * to judge the grant's expiry by instead of the server's `TIME` (tests) or '', [7] audit cap, [8]
 * attempt key ttl ms, [9…] audit pairs. A grant is checked in the same script that writes the
 * marker, so a revoke (or the grant's end, by the clock every replica shares) is ordered strictly
 * before the start (refused: 'grant-gone', nothing written) or after it.
 * The attempt key (`namedWrite`) keeps a resend after a lost reply from writing the call's
 * `tool-started` (and `auto-approved`, `grant-used`) a second time. It is looked at after the fence:
 * a process that lost the thread meanwhile is still told so, and never starts the call.
 */
const markExecutingAttempt = namedWrite({ key: 5, ttl: 8, answer: 'ok' });
export const MARK_EXECUTING_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'fenced' end
${markExecutingAttempt.ranBefore}
if ARGV[5] ~= '' then
  local json = redis.call('HGET', KEYS[4], ARGV[5])
  if not json then return 'grant-gone' end
  local grant = ${decodedJson('json')}
  ${serverClock({ override: 6 })}
  if type(grant) ~= 'table' or type(grant.expiresAt) ~= 'number' or grant.expiresAt <= clock then return 'grant-gone' end
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
${appendAuditEvents({ key: 3, cap: 7, first: 9 })}
${markExecutingAttempt.record}
return 'ok'
`;

/**
 * Takes back a marker whose call was not started (its replicas did not confirm it). KEYS[1]
 * executing markers, [2] fence, [3] audit stream. ARGV[1] token, [2] call id, [3] the marker JSON
 * as written, [4] audit cap, [5…] audit pairs. 'fenced' or 'changed' leave the marker as it is.
 */
export const UNMARK_EXECUTING_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'fenced' end
if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[3] then return 'changed' end
redis.call('HDEL', KEYS[1], ARGV[2])
${appendAuditEvents({ key: 3, cap: 4, first: 5 })}
return 'ok'
`;

/**
 * KEYS[1] executing markers, [2] audit stream, [3] this write's attempt key. ARGV[1] call id, [2]
 * marker JSON, [3] audit cap, [4] attempt key ttl ms, [5…] audit pair. Not fenced, so a resend
 * after a lost reply would run it again: the attempt key (`namedWrite`) keeps the call's
 * `tool-executed` from being written twice.
 */
const finishExecutingAttempt = namedWrite({ key: 3, ttl: 4, answer: 'ok' });
export const FINISH_EXECUTING_SCRIPT = `
${finishExecutingAttempt.ranBefore}
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
${appendAuditEvents({ key: 2, cap: 3, first: 5 })}
${finishExecutingAttempt.record}
return 'ok'
`;
