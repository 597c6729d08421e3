--[[
  Removes one dead letter of a tenant, or all of them.
  KEYS[1] tenant index        ({<prefix>:<queue>}:~dlq:<tenantKeyPart>)
  KEYS[2] tenant entries      ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:entries)
  KEYS[3] tenant resolutions  ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:resolved)
  KEYS[4] open letters        ({<prefix>:<queue>}:~dlq-open)
  ARGV[1] job id, or '' for every dead letter of the tenant on this queue
  Returns how many were removed.
]]
if ARGV[1] == '' then
  local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
  for i = 1, #ids, 1000 do
    redis.call('HDEL', KEYS[4], unpack(ids, i, math.min(i + 999, #ids)))
  end
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
  return #ids
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])
