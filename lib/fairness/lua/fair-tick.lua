--[[
  Periodic upkeep, run by every process: consumer heartbeat and window, lease reaping (a dead
  process never holds a slot), re-sending stale in-transit jobs, slow-lane recovery, dispatch.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-common.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  slow lane config (JSON, see fair-release.lua)
  ARGV[4]  BullMQ job key prefix ({<prefix>:<queue>}:<queue>:)
  ARGV[5]  re-send in-transit jobs older than this (ms)
  ARGV[6]  consumer id of this process
  ARGV[7]  this process's worker concurrency (0 = no worker, -1 = leaving)
  ARGV[8]  consumer heartbeat ttl (ms)
  ARGV[9]  window per consumer slot (factor)
  Returns {{event, tenant, failures, ...}, {id, json, priority, ...}, ms until a rate-limited tenant wakes (-1 none)}.
]]
local now = nowMs()
local slowCfg = cjson.decode(ARGV[3])
local jobPrefix = ARGV[4]
local kConsumers = base .. ':consumers'
local kConc = base .. ':conc'
local conc = tonumber(ARGV[7])
if conc > 0 then
  redis.call('ZADD', kConsumers, now + tonumber(ARGV[8]), ARGV[6])
  redis.call('HSET', kConc, ARGV[6], conc)
elseif conc < 0 then
  redis.call('ZREM', kConsumers, ARGV[6])
  redis.call('HDEL', kConc, ARGV[6])
end
local dead = redis.call('ZRANGEBYSCORE', kConsumers, '-inf', now, 'LIMIT', 0, 100)
for _, id in ipairs(dead) do
  redis.call('ZREM', kConsumers, id)
  redis.call('HDEL', kConc, id)
end
local total = 0
for _, v in ipairs(redis.call('HVALS', kConc)) do total = total + tonumber(v) end
local win = math.max(cfg.minWin, math.ceil(total * tonumber(ARGV[9])))
redis.call('HSET', kState, 'window', win, 'slots', total)

local touched, events = {}, {}
local expired = redis.call('ZRANGEBYSCORE', kLeases, '-inf', now, 'LIMIT', 0, 200)
for _, id in ipairs(expired) do
  local jk = jobPrefix .. id
  if redis.call('EXISTS', jk) == 1 then
    local f = redis.call('HMGET', jk, 'finishedOn', 'returnvalue', 'failedReason')
    if not f[1] then
      redis.call('ZADD', kLeases, now + cfg.lease, id)
    elseif f[2] then
      releaseOne(id, 'c', now, slowCfg, touched, events)
    elseif f[3] and string.sub(f[3], 1, 11) == '[cancelled:' then
      releaseOne(id, 'x', now, slowCfg, touched, events)
    else
      releaseOne(id, 'f', now, slowCfg, touched, events)
    end
  elseif redis.call('ZSCORE', kTransit, id) then
    redis.call('ZADD', kLeases, now + cfg.lease, id)
  else
    releaseOne(id, 'c', now, slowCfg, touched, events)
  end
end

local out = {}
local stale = redis.call('ZRANGEBYSCORE', kTransit, '-inf', now - tonumber(ARGV[5]), 'LIMIT', 0, 200)
for _, id in ipairs(stale) do
  local payload = redis.call('HGET', kData, id)
  if redis.call('EXISTS', jobPrefix .. id) == 1 or not payload then
    redis.call('ZREM', kTransit, id)
    redis.call('HDEL', kData, id)
  else
    redis.call('ZADD', kTransit, now, id)
    out[#out + 1] = id
    out[#out + 1] = payload
    if #LANES > 1 then out[#out + 1] = 2 else out[#out + 1] = 0 end
  end
end

if slowCfg.threshold > 0 then
  for _, t in ipairs(redis.call('SRANDMEMBER', kSlow, 100)) do checkRecovery(t, now, slowCfg, events) end
end
for t in pairs(touched) do activate(t) end
for _, v in ipairs(dispatch(tonumber(ARGV[2]), now)) do out[#out + 1] = v end
return {events, out, nextWake(now)}
