--- @include "../../lua/fair-keys"
--- @include "../../lua/fair-tenants"
--[[
  Fair-gate part, the rate limit's wake-ups: a tenant over its limit waits in :limited (zset
  tenant -> ms when its next job may start, written by dispatch's pick) out of turn; each call
  puts back those whose time came, and tells the process when the next one is due.
]]
-- Tenants whose rate limit allows a start again go back in turn.
local function wakeLimited(now)
  if BG then budgetWake(loadTenants, activate) end
  local due = redis.call('ZRANGEBYSCORE', kLimited, '-inf', now, 'LIMIT', 0, 200)
  if #due == 0 then return end
  variadic('ZREM', kLimited, due)
  loadTenants(due)
  for _, t in ipairs(due) do
    tenants[t].woke = true
    activate(t)
  end
end

-- Milliseconds until the next rate-limited tenant may start (-1 when none waits), so the
-- process can wake at that moment instead of polling.
local function nextWake(now)
  local top = redis.call('ZRANGE', kLimited, 0, 0, 'WITHSCORES')
  if #top == 0 then return -1 end
  local wait = math.ceil(tonumber(top[2]) - now)
  if wait < 0 then wait = 0 end
  return wait
end
