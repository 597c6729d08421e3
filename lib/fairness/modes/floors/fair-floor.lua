--- @include "../../lua/fair-keys"
--- @include "../../lua/fair-tenants"
--[[
  Fair-gate part, mode floors (includes fair-tenants; fair-dispatch includes it): guaranteed floors
  (minConcurrency). A tenant with a floor and work keeps up to twice its floor in flight (at most
  its cap): dispatch tops it up first, out of turn and beyond a full window, and every job of such
  a tenant goes to BullMQ at the top priority (priority -1 in a dispatch's reply, see
  fair-gate-sender.ts), so its count in flight is what runs or starts next: a slot it frees is
  refilled by its own staged job, not by the flood admitted before it. Its turns and its cap
  (the burst ceiling) are unchanged.
  Keys: :below set of floor tenants a call left below their target with admissible work (the
        budget ran out); kState field below = its size, read with the window, so a gate where
        every floor is met (or none is set) reads nothing more
        | :floors hash tenant -> floor recorded for it (run-time override, else directory/tier
        hint; the queue default is not listed), summed against the workers' slots ('floors' op)
  A tenant's floor: min (run-time), else dmin (directory/tier hint), else cfg.dmin; at most its cap.
]]
local kBelow = base .. ':below'
local kFloors = base .. ':floors'
-- Members of :below this call read (dispatch reads them only when kState says there are some).
local belowRead = {}
local belowCount = 0

local function floorOf(r)
  if r.cap > 0 and r.min > r.cap then return r.cap end
  return r.min
end

-- Jobs in flight a floor tenant keeps while it has work: its floor running, as many staged.
local function floorTarget(r)
  local target = 2 * floorOf(r)
  if r.cap > 0 and target > r.cap then target = r.cap end
  return target
end

-- A floor tenant left below its target with work it may start now (not paused, not held by its
-- rate limit: the limit's wake-up loads it again).
local function belowFloor(r, now)
  if r.min <= 0 or r.paused or r.inf >= floorTarget(r) or capped(r) or backlog(r) == 0 then
    return false
  end
  return not (r.rl and r.tat - now > r.rl[2])
end

-- At the start of a dispatch: loads the tenants an earlier call left below their floor (count is
-- kState's below field). Returns whether any floor tenant is loaded (the candidates).
local function floorCandidates(count)
  belowCount = tonumber(count) or 0
  if belowCount > 0 then
    local members = redis.call('SMEMBERS', kBelow)
    for _, t in ipairs(members) do belowRead[t] = true end
    loadTenants(members)
  end
  return #floorLoaded > 0
end

-- Tops each loaded floor tenant up to its target, in its lanes' declaration order, before the
-- turns: out of turn and beyond the window (by at most the floors' shortfall), within budget,
-- its pause, cap and rate limit still holding. Adds {tenant, lane state, -1} to picks and
-- returns how many it admitted.
local function floorPicks(lanes, picks, off, budget, now)
  local n, seen = 0, {}
  for _, t in ipairs(floorLoaded) do
    local r = tenants[t]
    if r and not seen[t] and r.min > 0 and not r.paused and not off[t] then
      seen[t] = true
      local target = floorTarget(r)
      for _, s in ipairs(lanes) do
        -- capped: with a budget, its jobs in flight on every queue of the budget count.
        while r.inf < target and not capped(r) and n < budget
              and len(r, s.l) - (s.take[t] or 0) > 0 do
          local tat = nil
          if r.rl then
            tat = r.tat
            if tat < now and not (r.woke and tat >= now - r.rl[1]) then tat = now end
            if tat - now > r.rl[2] then
              off[t] = true
              redis.call('ZADD', kLimited, fmt(tat - r.rl[2]), t)
              break
            end
          end
          s.take[t] = (s.take[t] or 0) + 1
          r.inf = r.inf + 1
          r.dirty = true
          if tat then r.tat = tat + r.rl[1] end
          picks[#picks + 1] = { t, s, -1 }
          n = n + 1
        end
        if off[t] then break end
        if s.take[t] and len(r, s.l) - s.take[t] <= 0 then s.fin[t] = false end
      end
      if not off[t] and capped(r) then off[t] = true end
    end
  end
  return n
end

-- The floors wanted more than the bound beyond the window allows (see dispatch): recorded in
-- kState (field fcut, ms), which the tick reports once (floorsReport) for a warning.
local floorsCut = false
local function floorsBounded(now)
  if floorsCut then return end
  floorsCut = true
  redis.call('HSET', kState, 'fcut', now)
end

-- For the tick: {'floors', '', floor tenants below their floor} once after floors were bounded.
local function floorsReport(events)
  if not redis.call('HGET', kState, 'fcut') then return end
  redis.call('HDEL', kState, 'fcut')
  events[#events + 1] = 'floors'
  events[#events + 1] = ''
  events[#events + 1] = redis.call('SCARD', kBelow)
end

-- With flushTenants: keeps :below listing the floor tenants left below their target.
floorFlush = function(now)
  if #floorLoaded == 0 and belowCount == 0 then return end
  local add, rem, seen = {}, {}, {}
  for _, t in ipairs(floorLoaded) do
    local r = tenants[t]
    if r and not seen[t] then
      seen[t] = true
      local below = belowFloor(r, now)
      if below and not belowRead[t] then add[#add + 1] = t end
      if not below and belowRead[t] then rem[#rem + 1] = t end
    end
  end
  for t in pairs(belowRead) do
    if not seen[t] then rem[#rem + 1] = t end
  end
  if #add == 0 and #rem == 0 then return end
  if #add > 0 then variadic('SADD', kBelow, add) end
  if #rem > 0 then variadic('SREM', kBelow, rem) end
  belowRead = {}
  belowCount = redis.call('SCARD', kBelow)
  redis.call('HSET', kState, 'below', belowCount)
end

-- Records the floor a tenant's settings give it (run-time override, else hint) in :floors.
local function recordFloor(t)
  local h = redis.call('HMGET', tKey(t), 'min', 'dmin')
  local f = tonumber(h[1]) or tonumber(h[2]) or 0
  if f > 0 then redis.call('HSET', kFloors, t, f) else redis.call('HDEL', kFloors, t) end
end

-- {sum of the recorded floors, tenants recorded, the live workers' slots}.
local function floorTotals()
  local sum, vals = 0, redis.call('HVALS', kFloors)
  for _, v in ipairs(vals) do sum = sum + tonumber(v) end
  return { sum, #vals, tonumber(redis.call('HGET', kState, 'slots')) or 0 }
end
