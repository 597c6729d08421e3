--[[
  Removes one dead letter of a tenant, or all of them.
  KEYS[1] tenant index        ({<prefix>:<queue>}:~dlq:<tenantKeyPart>)
  KEYS[2] tenant entries      ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:entries)
  ARGV[1] job id, or '' for every dead letter of the tenant on this queue
  Returns how many were removed.
]]
if ARGV[1] == '' then
  local count = redis.call('ZCARD', KEYS[1])
  redis.call('DEL', KEYS[1], KEYS[2])
  return count
end
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])
