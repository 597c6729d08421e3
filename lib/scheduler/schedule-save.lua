--[[
  Writes a schedule only if it is as the caller read it: its record and its next run unchanged
  (compare-and-set). A pause, resume or save computed from a stale read would otherwise write
  back a definition another write replaced, bring back a removed schedule, or make due again a
  run the tick claimed meanwhile; the caller reads again and retries instead.

  KEYS[1] definitions (hash: schedule id -> JSON)
  KEYS[2] due index (sorted set: schedule id -> next run, epoch ms)
  KEYS[3] the tenant's keys (set), or the due index again for a schedule without a tenant

  ARGV[1] schedule id
  ARGV[2] the record as read: "=" .. JSON, or "" when there was none
  ARGV[3] the next run as read (epoch ms), or "" when it was not due
  ARGV[4] the record to write (JSON)
  ARGV[5] its next run (epoch ms), or "" to leave the due index
  ARGV[6] the key to add to KEYS[3], or "" for none

  Returns 1 when written, 0 when the schedule changed since it was read (nothing written).
]]
local id = ARGV[1]
local stored = redis.call('HGET', KEYS[1], id)
local seen = stored and ('=' .. stored) or ''
if seen ~= ARGV[2] then return 0 end
local score = redis.call('ZSCORE', KEYS[2], id)
if ARGV[3] == '' then
  if score then return 0 end
elseif not score or tonumber(score) ~= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], id, ARGV[4])
if ARGV[5] == '' then
  redis.call('ZREM', KEYS[2], id)
else
  redis.call('ZADD', KEYS[2], ARGV[5], id)
end
if ARGV[6] ~= '' then redis.call('SADD', KEYS[3], ARGV[6]) end
return 1
