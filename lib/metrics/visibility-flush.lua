--- @include "@core/tenant-key"
--[[
  One flush of a queue's visibility counters (QueueVisibility.flush), for a batch of tenants: the
  counters are added where the pipelined commands of each field used to add them, in one call
  instead of a command a field.
  KEYS[1]  totals hash (VisibilityKeys.totals)   KEYS[2]  tenants zset (VisibilityKeys.tenants)
  ARGV[1]  prefix of the tenant-minute hashes (VisibilityKeys.minute without tenant and minute)
  ARGV[2]  their time to live (s)   ARGV[3]  tenants idle since before this (ms) leave the zset
  ARGV[4..] per tenant: id, last activity (ms), jobs enqueued, first starts, minutes m; then per
           minute: the minute, pairs p, then p pairs of field and count (none zero)
  Every key derives from the queue's hash tag: one Cluster slot.
]]
local totals, seen = KEYS[1], {}
local prefix, ttl = ARGV[1], ARGV[2]
local i = 4
while i <= #ARGV do
  local t = ARGV[i]
  local enq, started, minutes = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  if enq > 0 then redis.call('HINCRBY', totals, t .. '|enq', enq) end
  if started > 0 then redis.call('HINCRBY', totals, t .. '|started', started) end
  seen[#seen + 1] = ARGV[i + 1]
  seen[#seen + 1] = t
  i = i + 5
  local part = nil
  for _ = 1, minutes do
    local pairsCount = tonumber(ARGV[i + 1])
    if pairsCount > 0 then
      part = part or tkp(t)
      local key = prefix .. part .. ':' .. ARGV[i]
      for p = i + 2, i + 2 * pairsCount, 2 do redis.call('HINCRBY', key, ARGV[p], ARGV[p + 1]) end
      redis.call('EXPIRE', key, ttl)
    end
    i = i + 2 + 2 * pairsCount
  end
end
for j = 1, #seen, 4000 do
  redis.call('ZADD', KEYS[2], unpack(seen, j, math.min(#seen, j + 3999)))
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
return #seen / 2
