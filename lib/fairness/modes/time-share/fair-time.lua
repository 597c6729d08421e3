--- @include "../../lua/fair-keys"
--- @include "../../lua/fair-tenants"
--[[
  Fair-gate part, mode time share (includes fair-tenants; dispatch and settle include it): fair share of worker time (fairness.share 'time',
  cfg.ts). With cfg.ts off nothing here runs (dispatch and release branch on cfg.ts once).
  A turn costs the job's expected run time instead of one job: dispatch advances the tenant's
  pass by estimate / weight, the release corrects it by (measured - charged) / weight, so a
  tenant's pass is the run time of its finished jobs plus the estimates of those in flight.
  Keys: :rt hash tenant -> JSON {a = the tenant's average run time (ms, EWMA over all its jobs),
        n = {name -> [average ms of the tenant's jobs of that name (-1 = none yet), then per lane
        (LANES order): ms charged for its jobs in flight, their count]}}. `name` is the job's
        name as the job's JSON spells it (escaped, so any characters are fine). The field is
        dropped when the tenant drains (nothing in flight, no backlog), like its other run-time
        fields; a tenant that never drains keeps at most RT_NAMES_PER_TENANT names beyond those
        in flight.
        :rtn hash name -> average run time of that name over all tenants (ms, EWMA): the estimate
        of a (tenant, name) not seen yet; at most RT_NAMES names (a new one beyond is not kept).
  The charge of each job in flight is not stored per job: each (tenant, name, lane) keeps the sum
  and count of what its jobs in flight were charged, and a release takes the average of it, so
  the charges taken back add up to exactly the charges made.
  The job is not known when its turn is picked (the backlog is popped after the picks): a pick
  costs the tenant's average `a`, and once the jobs are popped chargeTurns re-charges each with
  its (tenant, name) estimate.
]]
local TS = cfg.ts
local RT_ALPHA = 0.2
local RT_DEFAULT = 1
local RT_NAMES = 1024
local RT_NAMES_PER_TENANT = 64
local kRt = base .. ':rt'
local kRtn = base .. ':rtn'
local LANE_INDEX = {}
for i, l in ipairs(LANES) do LANE_INDEX[l] = i end

-- The job's name as its JSON spells it ('' when the value is not the gate's own JSON): the
-- string after {"n":" up to the first quote not escaped by a backslash.
local function jobName(v)
  if string.sub(v, 1, 6) ~= '{"n":"' then return '' end
  local from = 7
  while true do
    local q = string.find(v, '"', from, true)
    if not q then return '' end
    local b = q - 1
    while b >= 7 and string.byte(v, b) == 92 do b = b - 1 end
    if (q - 1 - b) % 2 == 0 then return string.sub(v, 7, q - 1) end
    from = q + 1
  end
end

-- Reads the run-time record of every tenant of `list` loaded already and not read yet (one HMGET).
local function loadTimes(list)
  local need, seen = {}, {}
  for _, t in ipairs(list) do
    local r = tenants[t]
    if r and not r.rt and not seen[t] then
      seen[t] = true
      need[#need + 1] = t
    end
  end
  if #need == 0 then return end
  local vals = hmgetMany(kRt, need)
  for i, t in ipairs(need) do
    local r = tenants[t]
    local rt, count = nil, 0
    if vals[i] then
      rt = cjson.decode(vals[i])
      for _ in pairs(rt.n) do count = count + 1 end
    else
      rt = { n = {} }
    end
    r.rt, r.rtHad, r.rtCount, r.rtDirty = rt, vals[i] ~= false, count, false
  end
end

-- What a pick costs before its job is known: the tenant's average run time.
local function turnCost(r) return r.rt.a or RT_DEFAULT end

local function newEntry()
  local e = { -1 }
  for i = 1, #LANES do e[2 * i], e[2 * i + 1] = 0, 0 end
  return e
end

-- Moves each picked tenant's pass by ms / weight in the lane state s (and its ready-set score,
-- where dispatch left it in turn). delta: lane state -> tenant -> ms (with share 'time'), or
-- turns (dispatch gives back -1 a turn that went to nothing; the unit of a plain turn is 1).
local function movePasses(delta)
  for s, d in pairs(delta) do
    local fix = {}
    for t, ms in pairs(d) do
      local r = tenants[t]
      local p = r.pass[s.l]
      if ms ~= 0 and p then
        p = p + ms / weightIn(r, s.l)
        r.pass[s.l] = p
        r.dirty = true
        if type(s.fin[t]) == 'number' then
          s.fin[t] = p
          fix[#fix + 1] = fmt(p)
          fix[#fix + 1] = t
        end
      end
    end
    if #fix > 0 then variadic('ZADD', rKey(s.l), fix, 'XX') end
  end
end

-- After dispatch popped its jobs: each picked job is charged its (tenant, name) estimate (else
-- the name's queue-wide average, else RT_DEFAULT ms) in place of turnCost, and the charge joins
-- what its (tenant, name, lane) has in flight. picks: {tenant, lane state, priority};
-- at[n]: index in vals of pick n's job (nil: none); vals: the jobs' values.
local function chargeTurns(picks, at, vals)
  -- Floor picks (fair-floor.lua) come before any page is loaded: their tenants' records too.
  local pickers = {}
  for n, p in ipairs(picks) do pickers[n] = p[1] end
  loadTimes(pickers)
  local names, missing, seen = {}, {}, {}
  for n, p in ipairs(picks) do
    local i = at[n]
    local v = i and vals[i]
    if v then
      local name = jobName(v)
      names[n] = name
      local e = tenants[p[1]].rt.n[name]
      if (not e or e[1] < 0) and not seen[name] then
        seen[name] = true
        missing[#missing + 1] = name
      end
    end
  end
  local byName = {}
  if #missing > 0 then
    local got = hmgetMany(kRtn, missing)
    for i, name in ipairs(missing) do byName[name] = tonumber(got[i]) end
  end
  local delta = {}
  for n, p in ipairs(picks) do
    local t, s = p[1], p[2]
    local r = tenants[t]
    local d = delta[s]
    if not d then
      d = {}
      delta[s] = d
    end
    local est = 0
    local name = names[n]
    if name then
      local e = r.rt.n[name]
      if not e then
        e = newEntry()
        r.rt.n[name] = e
        r.rtCount = r.rtCount + 1
      end
      est = e[1]
      if est < 0 then est = byName[name] or RT_DEFAULT end
      local j = 2 * LANE_INDEX[s.l]
      e[j], e[j + 1] = (e[j] or 0) + est, (e[j + 1] or 0) + 1
      r.rtDirty = true
    end
    d[t] = (d[t] or 0) + est - turnCost(r)
  end
  movePasses(delta)
end

local function ewma(avg, ms)
  if not avg or avg < 0 then return ms end
  return avg + RT_ALPHA * (ms - avg)
end

-- Moves each tenant's pass by ms / weight in lane l, and its ready-set score where it is in turn.
-- delta: lane -> tenant -> ms (changed in place to the pass correction).
local function applyTimes(delta)
  for l, d in pairs(delta) do
    local list2 = {}
    for t, ms in pairs(d) do
      local r = tenants[t]
      local corr = ms / weightIn(r, l)
      if r.pass[l] and corr ~= 0 then
        r.pass[l] = r.pass[l] + corr
        r.dirty = true
        list2[#list2 + 1] = t
        d[t] = corr
      end
    end
    if #list2 > 0 then
      local scores = readMany('ZMSCORE', rKey(l), list2)
      local fix = {}
      for k, t in ipairs(list2) do
        if scores[k] then
          fix[#fix + 1] = fmt(tonumber(scores[k]) + d[t])
          fix[#fix + 1] = t
        end
      end
      if #fix > 0 then variadic('ZADD', rKey(l), fix, 'XX') end
    end
  end
end

-- Releases in time mode: each job's charge leaves its (tenant, name, lane); with its measured
-- run time (times[id], ms; none from the lease reaper) the tenant's pass is corrected by
-- (measured - charged) / weight and the averages learn it. ids, vals, owners: as releaseMany
-- read them (owners[i] false: not a job of the gate).
local function releaseTimes(ids, vals, owners, times)
  local list = {}
  for i = 1, #ids do
    if owners[i] then list[#list + 1] = owners[i] end
  end
  loadTimes(list)
  local delta, learned, order = {}, {}, {}
  for i, id in ipairs(ids) do
    local t = owners[i]
    if t then
      local r = tenants[t]
      local name = jobName(vals[i])
      local e = r.rt.n[name]
      local ms = times and tonumber(times[id])
      if ms and ms < 0 then ms = 0 end
      if e then
        -- The lane its record names (lanes with share 'time', jobRecord), else the first lane
        -- with a charge for its name (a record written before the lane was kept).
        local named = string.match(jobJson(vals[i]) or '', ',"l":(%d+)}$')
        local j = named and tonumber(named)
        if not (j and (e[2 * j + 1] or 0) > 0) then
          j = nil
          for k = 1, #LANES do
            if not j and (e[2 * k + 1] or 0) > 0 then j = k end
          end
        end
        if j then
          local c = e[2 * j + 1]
          local charged = e[2 * j] / c
          if c == 1 then e[2 * j] = 0 else e[2 * j] = e[2 * j] - charged end
          e[2 * j + 1] = c - 1
          if ms then
            local key = LANES[j]
            delta[key] = delta[key] or {}
            delta[key][t] = (delta[key][t] or 0) + ms - charged
          end
        end
      elseif ms and r.rtCount < RT_NAMES_PER_TENANT then
        e = newEntry()
        r.rt.n[name] = e
        r.rtCount = r.rtCount + 1
      end
      if ms then
        if e then e[1] = ewma(e[1], ms) end
        r.rt.a = ewma(r.rt.a, ms)
        if not learned[name] then
          learned[name] = {}
          order[#order + 1] = name
        end
        learned[name][#learned[name] + 1] = ms
      end
      r.rtDirty = true
      if e and r.rtCount > RT_NAMES_PER_TENANT then
        local idle = true
        for j = 1, #LANES do
          if (e[2 * j + 1] or 0) > 0 then idle = false end
        end
        if idle then
          r.rt.n[name] = nil
          r.rtCount = r.rtCount - 1
        end
      end
    end
  end
  applyTimes(delta)
  if #order > 0 then
    local avgs = hmgetMany(kRtn, order)
    local set, fresh = {}, 0
    for i, name in ipairs(order) do
      if not avgs[i] then fresh = fresh + 1 end
    end
    local room = fresh == 0 or redis.call('HLEN', kRtn) + fresh <= RT_NAMES
    for i, name in ipairs(order) do
      if avgs[i] or room then
        local avg = tonumber(avgs[i])
        for _, ms in ipairs(learned[name]) do avg = ewma(avg, ms) end
        set[#set + 1] = name
        set[#set + 1] = fmt(avg)
      end
    end
    if #set > 0 then variadic('HSET', kRtn, set) end
  end
end

-- Failed attempts that will retry (their jobs keep their slots): each is charged its measured run
-- time in full, in the lane of its charge in flight, so retries cost what they run. ids: job
-- ids; times: id -> ms.
local function chargeAttempts(ids, times)
  if #ids == 0 then return end
  local vals = hmgetMany(kJobs, ids)
  local owners, list = {}, {}
  for i = 1, #ids do
    owners[i] = vals[i] and jobTenant(vals[i])
    if owners[i] then list[#list + 1] = owners[i] end
  end
  loadTenants(list)
  loadTimes(list)
  local delta = {}
  for i, id in ipairs(ids) do
    local t, ms = owners[i], tonumber(times[id])
    if t and ms and ms > 0 then
      local e = tenants[t].rt.n[jobName(vals[i])]
      local lane = LANES[1]
      if e then
        for j = 1, #LANES do
          if (e[2 * j + 1] or 0) > 0 then
            lane = LANES[j]
            break
          end
        end
      end
      delta[lane] = delta[lane] or {}
      delta[lane][t] = (delta[lane][t] or 0) + ms
    end
  end
  applyTimes(delta)
end

-- Writes back the run-time records this call changed; a drained tenant's is dropped.
local function flushTimes()
  local set, del = {}, {}
  for t, r in pairs(tenants) do
    if r.rt then
      if r.inf <= 0 and backlog(r) == 0 then
        if r.rtHad then del[#del + 1] = t end
        r.rt, r.rtHad, r.rtCount = { n = {} }, false, 0
      elseif r.rtDirty then
        set[#set + 1] = t
        set[#set + 1] = cjson.encode(r.rt)
        r.rtHad = true
      end
      r.rtDirty = false
    end
  end
  if #set > 0 then variadic('HSET', kRt, set) end
  if #del > 0 then variadic('HDEL', kRt, del) end
end

-- Every script ends with flushTenants: in time mode the run-time records are written first
-- (flushTenants clears a drained tenant's in-flight count, which decides a record's fate).
if TS then
  local flushState = flushTenants
  flushTenants = function(now)
    flushTimes()
    flushState(now)
  end
end
