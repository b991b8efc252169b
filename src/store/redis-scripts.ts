import { CARD_LINK_FIELD } from './step-record.js';

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
 * A write named by an attempt key (KEYS[key]; ARGV[ttl] '' leaves the write unnamed): `ranBefore`
 * answers 'written' when the same write already ran, `record` (after the write) says it ran.
 * ioredis sends a command again when its reply was lost, on its new connection; by then another
 * process may hold the thread, and without its name the resend would be refused as fenced, as if
 * it had never been written: the caller would take back what the write records (a posted answer).
 */
function namedWrite({ key, ttl, answer = 'written' }: { key: number; ttl: number; answer?: string }): { ranBefore: string; record: string } {
  return {
    ranBefore: `if ARGV[${ttl}] ~= '' and redis.call('EXISTS', KEYS[${key}]) == 1 then return '${answer}' end`,
    record: `if ARGV[${ttl}] ~= '' then redis.call('SET', KEYS[${key}], '', 'PX', ARGV[${ttl}]) end`,
  };
}

/**
 * A Lua expression: the value of the JSON that `text` (a Lua expression) holds, or nil when it cannot
 * be read. The bot writes its JSON with `JSON.stringify`, which escapes a lone UTF-16 surrogate (half
 * of an emoji in a model's tool input or answer) as `\ud800`: valid JSON, which `JSON.parse` reads
 * back as it was, but cjson refuses it ("invalid unicode escape code"). Such text is read a second
 * time with every surrogate escape as U+FFFD: a change inside strings only (an escaped backslash
 * before `u` stays a backslash), and the scripts never look at the strings that can hold one (a
 * grant's input, a thread's answer), only at fields the bot itself fills (`expiresAt`,
 * `pendingStepId`). What is stored stays the bot's own text, read back exactly: a grant keeps
 * covering the very input that was approved, and only that. Nil (JSON nested deeper than cjson
 * reads, or not JSON) is for each caller to treat as the safe answer.
 */
function decodedJson(text: string): string {
  return `(function(text)
  local decoded, value = pcall(cjson.decode, text)
  if not decoded then decoded, value = pcall(cjson.decode, (string.gsub(text, '\\\\u[dD][89a-fA-F]%x%x', '\\\\ufffd'))) end
  if decoded then return value end
  return nil
end)(${text})`;
}

/**
 * Sets the Lua local `clock` to the time deadlines are judged by, in epoch ms: ARGV[override] when
 * given (a test's fake clock, see `RedisStoreOptions.serverClock`), else the server's `TIME`. One
 * clock for every replica, whatever theirs say. A script may write after `TIME`: Redis 7 replicates
 * a script by its effects, never by running it again.
 */
function serverClock({ override }: { override: number }): string {
  return `
local clock = tonumber(ARGV[${override}])
if not clock then
  local time = redis.call('TIME')
  clock = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end`;
}

/**
 * Issues the thread's next fencing token into KEYS[fence], `<counter>.<nonce>` (`fencing-token.ts`):
 * the counter larger than the last one's, even if that expired (it never goes below the current
 * time in milliseconds), the nonce ARGV[nonce], drawn by the caller, so that a token lost in a
 * failover is not issued again. A token of an older release (a plain number) is read as its counter.
 */
function issueToken({ fence, now, nonce, ttl }: { fence: number; now: number; nonce: number; ttl: number }): string {
  return `
local last = tonumber(string.match(redis.call('GET', KEYS[${fence}]) or '0', '^%d+') or '0')
local token = string.format('%.0f', math.max(last + 1, tonumber(ARGV[${now}]))) .. '.' .. ARGV[${nonce}]
redis.call('SET', KEYS[${fence}], token, 'PX', ARGV[${ttl}])`;
}

/**
 * Sets the Lua local `item` to the thread's in-flight item KEYS[inflight], or else moves the next
 * queued one (KEYS[queue]) in flight, kept ARGV[ttl] ms; false when there is neither.
 */
function takeItem({ queue, inflight, ttl }: { queue: number; inflight: number; ttl: number }): string {
  return `
local item = redis.call('LINDEX', KEYS[${inflight}], 0)
if not item then
  item = redis.call('LMOVE', KEYS[${queue}], KEYS[${inflight}], 'LEFT', 'RIGHT')
  if item then redis.call('PEXPIRE', KEYS[${inflight}], ARGV[${ttl}]) end
end`;
}

/**
 * Checks a history write (ARGV[history], JSON: see `HistoryWrite`) against the thread KEYS[meta]
 * (a hash: `meta`, `revision`) and its message list KEYS[list]: a patch is refused with 'stale'
 * unless the stored history is the one it was planned from. Sets the Lua local `revision`.
 * cjson reads it as it is (`decodedJson` is not needed): its only strings are messages as JSON text,
 * in which `JSON.stringify` already escaped any lone surrogate, so here its backslash is escaped too.
 */
function checkHistoryWrite({ meta, list, history }: { meta: number; list: number; history: number }): string {
  return `
local history = cjson.decode(ARGV[${history}])
local kind = redis.call('TYPE', KEYS[${meta}]).ok
local revision = 0
if kind == 'hash' then revision = tonumber(redis.call('HGET', KEYS[${meta}], 'revision') or '0') or 0 end
if history.mode == 'patch' and (kind ~= 'hash' or revision ~= history.baseRevision or redis.call('LLEN', KEYS[${list}]) ~= history.baseLength) then return 'stale' end`;
}

/**
 * Applies the checked history write and stores the thread's other fields (ARGV[metaJson]) with the
 * next revision: a patch trims, replaces and appends; only a rewrite (a legacy thread, another
 * process's write in between) sends the whole history. Both keys expire after ARGV[ttl] ms. While
 * a request waits in the thread (its `pendingStepId`), later if it was already kept longer: such a
 * save never shortens the life the step gave it (CREATE_STEP_SCRIPT, `stepRecordTtlMs`). Once
 * nothing waits, the save's TTL stands again: a thread whose request was decided at once is kept
 * `history.ttlHours`, not until two days past that request's expiry. Fields the script cannot read
 * (`decodedJson`: nested deeper than cjson reads) are saved all the same, with the longer life, as
 * if a request waited: a Lua error there would refuse every save of the thread.
 */
function applyHistoryWrite({ meta, list, metaJson, ttl }: { meta: number; list: number; metaJson: number; ttl: number }): string {
  return `
local threadTtl = tonumber(ARGV[${ttl}])
local fields = ${decodedJson(`ARGV[${metaJson}]`)}
if type(fields) ~= 'table' or type(fields.pendingStepId) == 'string' then threadTtl = math.max(threadTtl, redis.call('PTTL', KEYS[${meta}])) end
if history.mode == 'patch' then
  if history.dropFront > 0 then redis.call('LTRIM', KEYS[${list}], history.dropFront, -1) end
  for _, entry in ipairs(history.set) do redis.call('LSET', KEYS[${list}], entry[1], entry[2]) end
else
  redis.call('DEL', KEYS[${meta}], KEYS[${list}])
end
for i = 1, #history.append, 500 do
  redis.call('RPUSH', KEYS[${list}], unpack(history.append, i, math.min(i + 499, #history.append)))
end
revision = revision + 1
redis.call('HSET', KEYS[${meta}], 'meta', ARGV[${metaJson}], 'revision', revision)
redis.call('PEXPIRE', KEYS[${meta}], threadTtl)
redis.call('PEXPIRE', KEYS[${list}], threadTtl)`;
}

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
 * 'drain' (a free lock is taken: {'committed', token, first item}) or 'hand-off' (a free thread is
 * offered to the workers), [24] most hints kept, [25] attempt key ttl ms, [26] token nonce, [27…]
 * audit pairs.
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
  if earlier ~= '' and redis.call('GET', KEYS[12]) == earlier then return {'committed', earlier, redis.call('LINDEX', KEYS[14], 0)} end
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
  return {'committed', taken, item}
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
 * KEYS[1] step. ARGV[1] the thread card's ts, [2] its link ('' for none). Records the card of a
 * step that still exists (a card posted after the step's key expired must not leave a hash without
 * a step behind) and has none on record: a step has one thread card. Returns the step's revision
 * and the card on record, or nil when the step is gone.
 */
export const SET_STEP_CARD_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local card = redis.call('HGET', KEYS[1], 'card')
if not card then
  card = ARGV[1]
  redis.call('HSET', KEYS[1], 'card', card)
  if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], '${CARD_LINK_FIELD}', ARGV[2]) end
end
return { redis.call('HGET', KEYS[1], 'revision') or '0', card }
`;

/**
 * KEYS[1] step. ARGV[1] the card on record, [2] the card that replaces it, [3] its link ('' for
 * none). Replaces the thread card only while ARGV[1] is the one on record. Returns 1 when it did,
 * or when ARGV[2] is on record already: a resend after a lost reply, whose card is the step's and
 * must not be taken back.
 */
export const REPLACE_STEP_CARD_SCRIPT = `
local card = redis.call('HGET', KEYS[1], 'card')
if card ~= ARGV[1] and card ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'card', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], '${CARD_LINK_FIELD}', ARGV[3]) else redis.call('HDEL', KEYS[1], '${CARD_LINK_FIELD}') end
return 1
`;

/**
 * KEYS[1] step. ARGV[1] the copy's field (its channel's), [2] the copy's JSON. Records a copy of the
 * card in its channel unless one is on record there already: two processes that read the step
 * without it (an edit's copies, a card refresh's, an escalation hop's) each post one, and only the
 * first recorded is the step's (the other is taken back). Only on a step that still exists: a copy
 * posted after the step's key expired must not leave a hash without a step behind. Returns the
 * copy on record there, or nil when the step is gone.
 */
export const RECORD_CARD_COPY_SCRIPT = `
if redis.call('HEXISTS', KEYS[1], 'data') == 0 then return false end
local copy = redis.call('HGET', KEYS[1], ARGV[1])
if not copy then
  copy = ARGV[2]
  redis.call('HSET', KEYS[1], ARGV[1], copy)
end
return copy
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

/** Defines the Lua function `readThread(threadKey, messagesKey)`: the reply `READ_THREAD_SCRIPT` gives. */
function readThreadFunction(): string {
  return `
local function readThread(threadKey, messagesKey)
  local kind = redis.call('TYPE', threadKey).ok
  if kind == 'string' then return {'legacy', redis.call('GET', threadKey)} end
  if kind ~= 'hash' then return false end
  return {'list', redis.call('HGET', threadKey, 'meta'), redis.call('HGET', threadKey, 'revision'), redis.call('LRANGE', messagesKey, 0, -1)}
end`;
}

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

/**
 * KEYS[1] queue, [2] lock, [3] index of threads with work, [4] fence, [5] in-flight item, [6] this
 * write's attempt key. ARGV[1] item, [2] lock ttl ms, [3] queue ttl ms, [4] thread key, [5] now, [6]
 * fence ttl ms, [7] attempt key ttl ms, [8] token nonce. When the caller took the lock: {new token, the item to
 * handle first, in flight (TAKE_WORK_SCRIPT's rule)}. Sent again after a lost reply, it queues
 * nothing twice and answers as the first run did (COMMIT_STEP_AND_QUEUE_SCRIPT's attempt key).
 */
export const ENQUEUE_AND_LOCK_SCRIPT = `
local earlier = redis.call('GET', KEYS[6])
if earlier then
  if earlier ~= '' and redis.call('GET', KEYS[2]) == earlier then return {earlier, redis.call('LINDEX', KEYS[5], 0)} end
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
return {token, item}
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
 * TRY_LOCK_SCRIPT, then TAKE_WORK_SCRIPT's take in the same step: {token, item or false}. When the
 * item resumes a step of this thread's shard, it also reads what the resume's first round trip
 * would: {token, item, step id, the thread as READ_THREAD_SCRIPT gives it, the step as HGETALL
 * gives it}.
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
if type(stepId) ~= 'string' or #stepId ~= 40 or not string.match(stepId, '^[0-9a-f]+$') or string.sub(stepId, 1, 8) ~= ARGV[6] then return {token, item} end
${readThreadFunction()}
return {token, item, stepId, readThread(KEYS[5], KEYS[6]), redis.call('HGETALL', ARGV[5] .. stepId)}
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
