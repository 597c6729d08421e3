--[[
  Corrects a tenant's backlog counters (`|enq` - `|started`) to the count BullMQ holds, once
  both stayed the same for `settle` ms: then no live process holds an unwritten count for the
  tenant, and what is left is a count lost with a killed process. Two calls make a correction:
  the first records what it saw, a later one with the same view applies it.
  KEYS[1]  totals hash (VisibilityKeys.totals)    KEYS[2]  reconcile hash (VisibilityKeys.reconcile)
  ARGV[1]  tenant id   ARGV[2]  jobs of the tenant waiting in BullMQ   ARGV[3]  now (ms)
  ARGV[4]  settle (ms)
  Returns the correction applied to `|started` (0 when none).
]]
local t = ARGV[1]
local truth = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local r = redis.call('HMGET', KEYS[1], t .. '|enq', t .. '|started')
local enq, started = tonumber(r[1]) or 0, tonumber(r[2]) or 0
if enq - started == truth then
  redis.call('HDEL', KEYS[2], t)
  return 0
end
local view = enq .. ':' .. started .. ':' .. truth
local seen = redis.call('HGET', KEYS[2], t)
if seen then
  local at, was = string.match(seen, '^(%d+):(.*)$')
  if was == view then
    if now - tonumber(at) < tonumber(ARGV[4]) then return 0 end
    local by = enq - started - truth
    redis.call('HINCRBY', KEYS[1], t .. '|started', by)
    redis.call('HDEL', KEYS[2], t)
    return by
  end
end
redis.call('HSET', KEYS[2], t, string.format('%d', now) .. ':' .. view)
return 0
