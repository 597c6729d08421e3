--- @include "../../lua/fair-keys"
--- @include "../../lua/fair-tenants"
--[[
  Fair-gate part, the slow lane (fairness.slowLane): a tenant whose jobs keep failing for good
  is served at a share of its weight (weightIn, fair-tenants.lua) until its failures in the
  window fall to the recovery level. Releases count the failures (releaseMany, fair-settle.lua),
  releases and the tick check the recovery.
  slowCfg (the scripts' slow-lane argument): threshold (0 = off), window (ms), recoverAt
  Keys: :f:<tkp(tenant)> zset of failures (score = time) | :slow set of the tenants in it
]]
-- Counts one final failure towards the tenant's slow lane.
local function countFailure(r, id, now, slowCfg, events)
  local fk = fKey(r.t)
  redis.call('ZADD', fk, now, id .. '@' .. now)
  redis.call('ZREMRANGEBYSCORE', fk, '-inf', now - slowCfg.window)
  redis.call('PEXPIRE', fk, slowCfg.window)
  local count = redis.call('ZCARD', fk)
  if count >= slowCfg.threshold and not r.slow then
    r.slow = true
    setSettings(r.t, 'slow', 1)
    redis.call('SADD', kSlow, r.t)
    events[#events + 1] = 'enter'
    events[#events + 1] = r.t
    events[#events + 1] = count
  end
end

-- Leaves the slow lane once failures in the window fall to the recovery level.
local function checkRecovery(t, now, slowCfg, events)
  local r = tenant(t)
  if not r.slow then
    redis.call('SREM', kSlow, t)
    return
  end
  local fk = fKey(t)
  redis.call('ZREMRANGEBYSCORE', fk, '-inf', now - slowCfg.window)
  local count = redis.call('ZCARD', fk)
  if count <= slowCfg.recoverAt then
    r.slow = false
    clearSettings(t, 'slow')
    redis.call('SREM', kSlow, t)
    events[#events + 1] = 'leave'
    events[#events + 1] = t
    events[#events + 1] = count
  end
end
