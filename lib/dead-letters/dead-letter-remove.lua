--[[
  Removes one dead letter of a tenant, or a batch of all of them.
  KEYS[1] tenant index        ({<prefix>:<queue>}:~dlq:<tenantKeyPart>)
  KEYS[2] tenant entries      ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:entries)
  KEYS[3] tenant resolutions  ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:resolved)
  KEYS[4] open letters        ({<prefix>:<queue>}:~dlq-open), hash job id -> tenant id
  ARGV[1] job id, or '' for the tenant's dead letters on this queue, oldest first
  ARGV[2] with '': most letters removed in this call (the caller calls again while it removes
          that many: one call over 100,000 letters held Redis 335 ms)
  ARGV[3] the tenant id: an open letter's mark is dropped only when it is this tenant's (the
          open letters are the queue's, so another tenant's purge naming a job id must not stop
          the watch on a letter it does not own)
  Returns how many were removed.
]]
local function unmark(id)
  if redis.call('HGET', KEYS[4], id) == ARGV[3] then redis.call('HDEL', KEYS[4], id) end
end
if ARGV[1] == '' then
  local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
  for i = 1, #ids, 1000 do
    local part = { unpack(ids, i, math.min(i + 999, #ids)) }
    redis.call('ZREM', KEYS[1], unpack(part))
    redis.call('HDEL', KEYS[2], unpack(part))
    redis.call('HDEL', KEYS[3], unpack(part))
  end
  for _, id in ipairs(ids) do unmark(id) end
  if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('DEL', KEYS[2], KEYS[3]) end
  return #ids
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
unmark(ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])
