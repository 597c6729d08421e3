--[[
  Fair-gate part, the rate limit (fairness.rateLimit, a tenant's `rateLimit`, tier hints): the
  limit as the scripts get it. The GCRA itself runs in dispatch's pick (fair-dispatch.lua, on
  each tenant's tat); waking the tenants it held back is fair-rate-wake.lua.
]]
-- "T:tol:max:per:burst" (emission interval and burst tolerance in ms, then the limit as given)
-- -> {T, tol}; "none" or nothing -> nil.
local function parseRate(s)
  if not s or s == 'none' then return nil end
  local T, tol = string.match(s, '^([^:]+):([^:]+)')
  return { tonumber(T), tonumber(tol) }
end
