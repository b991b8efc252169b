import { CARD_LINK_FIELD } from './step-record.js';

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
