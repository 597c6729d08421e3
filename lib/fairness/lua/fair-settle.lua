--- @include "fair-keys"
--- @include "../modes/budget/fair-budget"
--- @include "fair-tenants"
--- @include "../modes/time-share/fair-time"
--- @include "../modes/floors/fair-floor"
--- @include "../modes/slow-lane/fair-slow"
--- @include "fair-turns"
--[[
  Fair-gate part (every admitting command includes it): what follows a job's admission: releases, the slow lane,
  directory/tier hints.
]]
-- Frees the slots of finished jobs. pairs: flat {id, outcome, ...}; outcome: c completed,
-- k<token> completed by the run that holds BullMQ's lock <token> (the worker's job path, before
-- BullMQ's moveToFinished), f failed for good, x cancelled (no slow-lane count), d<tenant> a job
-- without a slot failed for good (priority by turn, fair-turns.lua); times (share 'time'):
-- id -> measured ms. Adds each tenant freed to `touched`.
local function releaseMany(pairsList, now, slowCfg, touched, events, times)
  if #pairsList == 0 then return end
  -- Whether the run that sent outcome k<token> lost its job's lock (its handler outlived
  -- lockDuration, e.g. a blocked event loop): BullMQ's stalled check took the job back and may be
  -- running it again, and that run holds the slot until it ends (or the tick sees the job leave
  -- BullMQ), so this release frees nothing. Another token holds the lock: lost. No lock: either
  -- BullMQ recorded this run's end before the release arrived (the release is batched and sent
  -- beside BullMQ's moveToFinished, on another connection): `finishedOn` is set, or the job was
  -- removed on completion; or the lock expired unrenewed and the job is not finished: lost.
  -- (Local to this function: the composed scripts are near Lua's 200 locals of a chunk.)
  local function lostLock(id, outcome)
    if string.byte(outcome) ~= 107 then return false end
    local job = cfg.jp .. id
    local lock = redis.call('GET', job .. ':lock')
    if lock then return lock ~= string.sub(outcome, 2) end
    return redis.call('HEXISTS', job, 'finishedOn') == 0 and redis.call('EXISTS', job) == 1
  end
  local ids, outcomes, seen = {}, {}, {}
  for i = 1, #pairsList, 2 do
    local id, outcome = pairsList[i], pairsList[i + 1]
    if not seen[id] and not lostLock(id, outcome) then
      seen[id] = true
      ids[#ids + 1] = id
      outcomes[#ids] = outcome
    end
  end
  local vals = hmgetMany(kJobs, ids)
  local owners, found = {}, {}
  for i = 1, #ids do
    owners[i] = vals[i] and jobTenant(vals[i])
    if owners[i] then found[#found + 1] = owners[i] end
  end
  loadTenants(found)
  local gone, p1s = {}, {}
  for i, id in ipairs(ids) do
    local t = owners[i]
    -- An entry without its tenant line: its record and lease go (no tenant to count it against).
    if vals[i] and not t then gone[#gone + 1] = id end
    if t then
      gone[#gone + 1] = id
      local r = tenants[t]
      r.inf = r.inf - 1
      r.dirty = true
      touched[t] = true
      if outcomes[i] == 'f' and slowCfg.threshold > 0 then
        countFailure(r, id, now, slowCfg, events)
      end
      if #LANES > 1 then p1s[#p1s + 1] = id end
    end
  end
  -- Priority by turn: a job that skipped the gate has no record and no slot, but its final
  -- failure (outcome 'd' and its tenant, fair-turns.lua) counts for its tenant's slow lane.
  if slowCfg.threshold > 0 then
    for i, id in ipairs(ids) do
      if not vals[i] and string.byte(outcomes[i]) == 100 then
        local t = string.sub(outcomes[i], 2)
        countFailure(tenant(t), id, now, slowCfg, events)
        touched[t] = true
      end
    end
  end
  if TS then releaseTimes(ids, vals, owners, times) end
  if BG then budgetReleased(touched, tenants) end
  if #gone == 0 then return end
  variadic('HDEL', kJobs, gone)
  variadic('ZREM', kLeases, gone)
  if #p1s > 0 then
    local lanesOf = hmgetMany(kLaneOf, p1s)
    local byLane = {}
    for i, lane in ipairs(lanesOf) do
      if lane then byLane[lane] = (byLane[lane] or 0) + 1 end
    end
    variadic('HDEL', kLaneOf, p1s)
    for lane, n in pairs(byLane) do
      if redis.call('HINCRBY', kState, 'p1:' .. lane, -n) < 0 then
        redis.call('HSET', kState, 'p1:' .. lane, 0)
      end
    end
  end
end

-- After releases: a tenant held back by its cap may be in turn again; the slow lane may end.
-- Priority by turn: a tenant that entered or left the slow lane in this call (events, triples
-- 'enter'|'leave', tenant, failures) has the jobs it queued by turn at its former weight taken
-- back into the gate (recallTurns, fair-turns.lua), which admits them at the turns of its new
-- weight: else a tenant entering it kept full turns for every job it had queued (and one leaving
-- it a tenth of them). Once per change, never per job. (The tick passes no `touched`: its own
-- recovery checks come after its releases.)
local function afterRelease(touched, now, slowCfg, events)
  for t in pairs(touched) do
    local r = tenants[t]
    if slowCfg.threshold > 0 and r.slow then checkRecovery(t, now, slowCfg, events) end
    if r.cap > 0 then activate(t) end
  end
  if not cfg.dt then return end
  for i = 1, #events, 3 do
    local ev, t = events[i], events[i + 1]
    if (ev == 'enter' or ev == 'leave') and recallTurns(t, now) > 0 then activate(t) end
  end
end

-- Applies directory/tier hints, a flat JSON list {tenant, [weight|false, cap|false, rate|false,
-- lanes json|false, floor|false], ...}, with the time they were written (dat). A changed rate limit starts the tenant afresh (its schedule was built
-- at the old rate). Returns the tenants it touched.
local function applyHints(hints)
  local changed = {}
  for i = 1, #hints, 2 do
    local t, h = hints[i], hints[i + 1]
    local prior = redis.call('HMGET', tKey(t), 'drl', 'dmin')
    if (h[3] or false) ~= (prior[1] or false) then
      redis.call('HDEL', kTat, t)
    end
    local set, clear = {}, {}
    for j, field in ipairs({'dw', 'dcap', 'drl', 'dlanes', 'dmin'}) do
      if h[j] then
        set[#set + 1] = field
        set[#set + 1] = h[j]
      else
        clear[#clear + 1] = field
      end
    end
    -- When they were written (dat): the tick drops an idle tenant's hints once they are older
    -- than any process's tierCacheMs, so a process sends them again with the tenant's next jobs.
    if #set > 0 then
      set[#set + 1] = 'dat'
      set[#set + 1] = nowMs()
      setSettings(t, unpack(set))
    else
      clear[#clear + 1] = 'dat'
    end
    if #clear > 0 then clearSettings(t, unpack(clear)) end
    if h[5] or prior[2] then recordFloor(t) end
    forget(t)
    changed[#changed + 1] = t
  end
  return changed
end
