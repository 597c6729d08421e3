--[[
  Sticky pools of caller-chosen job ids: the first pool a job id was routed to keeps it for a
  while, so a repeat of the id (a retried fan-out, a recovered schedule) after the tenant moved
  lands on the pool that may still hold the first copy, where BullMQ's id check drops it.
  KEYS[i]   the id's key (under the queue's hash tag)
  ARGV[1]   time to keep each key, in ms
  ARGV[1+i] the pool routing picked for KEYS[i]
  Returns the pool of each id: the one picked now, or the one that took it first.
]]
local out = {}
for i, key in ipairs(KEYS) do
  local pool = ARGV[i + 1]
  if redis.call('SET', key, pool, 'NX', 'PX', ARGV[1]) then
    out[i] = pool
  else
    out[i] = redis.call('GET', key) or pool
  end
end
return out
