/**
 * Lua scripts for the writes that must be atomic across bot processes. Audit events ride in the
 * same script as the change they record (`AUDIT_EVENTS`), so the trail is complete whenever the
 * state is. Fenced writes compare the caller's token with the thread's newest first.
 *
 * The scripts live one file per concern (`redis-step-scripts.ts`, `redis-thread-scripts.ts`,
 * `redis-work-queue-scripts.ts`, …); this file holds the Lua pieces they share.
 */

/** Appends the (type, json) pairs from ARGV[first] on to the audit stream KEYS[key], capped at ARGV[cap]. */
export function appendAuditEvents({ key, cap, first }: { key: number; cap: number; first: number }): string {
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
export function namedWrite({ key, ttl, answer = 'written' }: { key: number; ttl: number; answer?: string }): { ranBefore: string; record: string } {
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
export function decodedJson(text: string): string {
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
export function serverClock({ override }: { override: number }): string {
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
export function issueToken({ fence, now, nonce, ttl }: { fence: number; now: number; nonce: number; ttl: number }): string {
  return `
local last = tonumber(string.match(redis.call('GET', KEYS[${fence}]) or '0', '^%d+') or '0')
local token = string.format('%.0f', math.max(last + 1, tonumber(ARGV[${now}]))) .. '.' .. ARGV[${nonce}]
redis.call('SET', KEYS[${fence}], token, 'PX', ARGV[${ttl}])`;
}

/**
 * Sets the Lua local `item` to the thread's in-flight item KEYS[inflight], or else moves the next
 * queued one (KEYS[queue]) in flight, kept ARGV[ttl] ms; false when there is neither. `leftover`:
 * 1 when the item was in flight already (`WorkClaim.leftover`), else 0.
 */
export function takeItem({ queue, inflight, ttl }: { queue: number; inflight: number; ttl: number }): string {
  return `
local item = redis.call('LINDEX', KEYS[${inflight}], 0)
local leftover = item and 1 or 0
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
export function checkHistoryWrite({ meta, list, history }: { meta: number; list: number; history: number }): string {
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
export function applyHistoryWrite({ meta, list, metaJson, ttl }: { meta: number; list: number; metaJson: number; ttl: number }): string {
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

/** Defines the Lua function `readThread(threadKey, messagesKey)`: the reply `READ_THREAD_SCRIPT` gives. */
export function readThreadFunction(): string {
  return `
local function readThread(threadKey, messagesKey)
  local kind = redis.call('TYPE', threadKey).ok
  if kind == 'string' then return {'legacy', redis.call('GET', threadKey)} end
  if kind ~= 'hash' then return false end
  return {'list', redis.call('HGET', threadKey, 'meta'), redis.call('HGET', threadKey, 'revision'), redis.call('LRANGE', messagesKey, 0, -1)}
end`;
}
