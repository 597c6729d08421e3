--- @include "fair-keys"
--- @include "../modes/budget/fair-budget"
--- @include "../modes/rate-limit/fair-rate"
--[[
  Fair-gate part (includes fair-keys and fair-budget): the tenants' state. loadTenants reads the tenants a call
  touches in one batch (one HMGET of each gate-wide run-time hash for all of them, one
  SMISMEMBER of :conf, a settings HMGET only for a tenant listed there), flushTenants writes the
  changes back with one variadic write per hash, whatever the number of tenants.
]]
local SFIELDS = {'w', 'dw', 'cap', 'dcap', 'paused', 'slow', 'rl', 'drl', 'dlanes', 'min', 'dmin'}
-- With fair keys, each lane's key clock (fair-fairkey.lua): a gate-wide hash, field the tenant.
local function kvKey(l)
  if l == '' then return base .. ':kv' end
  return base .. ':kv:' .. l
end
local NOSETTINGS = {}

-- The tenants this call read, by id: loaded once (loadTenants), written back once (flushTenants).
local tenants = {}
-- Tenants loaded with a floor (minConcurrency), and the floors' flush (both see fair-floor.lua).
local floorLoaded = {}
local floorFlush

local function newTenant(t, h, inf)
  local rate = h[7] or h[8] or cfg.rl
  local lanes = nil
  if h[9] and not h[1] then lanes = cjson.decode(h[9]) end
  local r = { t = t, w = tonumber(h[1]) or tonumber(h[2]) or cfg.dw,
              cap = tonumber(h[3]) or tonumber(h[4]) or cfg.dcap, inf = tonumber(inf) or 0,
              paused = h[5] == '1', slow = h[6] == '1', rl = parseRate(rate), tat = 0,
              lanes = lanes, pass = {}, pass0 = {}, len = {}, len0 = {}, dirty = false,
              min = tonumber(h[10]) or tonumber(h[11]) or cfg.dmin or 0 }
  r.inf0 = r.inf
  if r.min > 0 then floorLoaded[#floorLoaded + 1] = t end
  if cfg.fk then r.kv, r.kv0 = {}, {} end
  return r
end

-- Loads every tenant of `list` not loaded yet (duplicates allowed).
local function loadTenants(list)
  local need, seen = {}, {}
  for _, t in ipairs(list) do
    if not tenants[t] and not seen[t] then
      seen[t] = true
      need[#need + 1] = t
    end
  end
  if #need == 0 then return end
  local conf = readMany('SMISMEMBER', kConf, need)
  local inf = hmgetMany(kInf, need)
  local limited = {}
  for i, t in ipairs(need) do
    local h = NOSETTINGS
    if conf[i] == 1 then h = redis.call('HMGET', tKey(t), unpack(SFIELDS)) end
    local r = newTenant(t, h, inf[i])
    tenants[t] = r
    if r.rl then limited[#limited + 1] = t end
  end
  if BG then budgetLoad(need, tenants) end
  for _, l in ipairs(LANES) do
    local passes = hmgetMany(pKey(l), need)
    local lens = hmgetMany(bKey(l), need)
    for i, t in ipairs(need) do
      local r, p, n = tenants[t], tonumber(passes[i]), tonumber(lens[i]) or 0
      r.pass[l], r.pass0[l], r.len[l], r.len0[l] = p, p, n, n
    end
    if cfg.fk then
      local clocks = hmgetMany(kvKey(l), need)
      for i, t in ipairs(need) do
        local c = tonumber(clocks[i])
        tenants[t].kv[l], tenants[t].kv0[l] = c, c
      end
    end
  end
  if #limited > 0 then
    local tats = hmgetMany(kTat, limited)
    for i, t in ipairs(limited) do tenants[t].tat = tonumber(tats[i]) or 0 end
  end
  for _, t in ipairs(need) do tenants[t].tat0 = tenants[t].tat end
end

local function tenant(t)
  local r = tenants[t]
  if r then return r end
  loadTenants({t})
  return tenants[t]
end

-- Forgets a tenant's copy (after a script changed its settings directly).
local function forget(t) tenants[t] = nil end

-- Settings writes keep :conf listing exactly the tenants that have a :t: hash.
local function setSettings(t, ...)
  redis.call('HSET', tKey(t), ...)
  redis.call('SADD', kConf, t)
end
local function clearSettings(t, ...)
  local k = tKey(t)
  redis.call('HDEL', k, ...)
  if redis.call('EXISTS', k) == 0 then redis.call('SREM', kConf, t) end
end

-- The tenant's backlog in lane l (its :bl count, kept with its list by enqueue and dispatch).
local function len(r, l) return r.len[l] end

local function backlog(r)
  local n = 0
  for _, l in ipairs(LANES) do n = n + len(r, l) end
  return n
end

local function capped(r)
  if BG then return r.cap > 0 and budgetCapped(r) end
  return r.cap > 0 and r.inf >= r.cap
end

-- Writes back what this call changed in each tenant: in-flight count, passes, rate schedule,
-- backlog lengths. A
-- drained tenant (nothing in flight, empty backlog) loses its run-time fields, so it leaves
-- nothing behind (a tenant that wakes up starts at the current virtual time anyway). Settings
-- and a rate-limit time still ahead stay.
local function flushTenants(now)
  if next(tenants) == nil then return end
  local counts = {}
  floorFlush(now)
  local infSet, infDel, tatSet, tatDel, passSet, passDel = {}, {}, {}, {}, {}, {}
  local lenSet, lenDel, kvSet, kvDel = {}, {}, {}, {}
  for i = 1, #LANES do
    passSet[i], passDel[i], lenSet[i], lenDel[i], kvSet[i], kvDel[i] = {}, {}, {}, {}, {}, {}
  end
  for t, r in pairs(tenants) do
    for i, l in ipairs(LANES) do
      local n = r.len[l]
      if n ~= r.len0[l] then
        if n > 0 then
          lenSet[i][#lenSet[i] + 1] = t
          lenSet[i][#lenSet[i] + 1] = int(n)
        else
          lenDel[i][#lenDel[i] + 1] = t
        end
        r.len0[l] = n
      end
    end
    if r.dirty then
      if r.inf <= 0 and backlog(r) == 0 then
        if r.inf0 ~= 0 then infDel[#infDel + 1] = t end
        for i, l in ipairs(LANES) do
          if r.pass0[l] then passDel[i][#passDel[i] + 1] = t end
        end
        if r.tat > now then
          if r.tat ~= r.tat0 then tatSet[#tatSet + 1] = t; tatSet[#tatSet + 1] = fmt(r.tat) end
        elseif r.tat0 > 0 then
          tatDel[#tatDel + 1] = t
        end
        r.inf = 0
        for _, l in ipairs(LANES) do r.pass[l] = nil end
        if cfg.fk then
          for i, l in ipairs(LANES) do
            if r.kv0[l] then kvDel[i][#kvDel[i] + 1] = t end
            r.kv[l], r.kv0[l] = nil, nil
          end
        end
      else
        if r.inf < 0 then r.inf = 0 end
        -- A count of 0 is no field (absent reads as 0): the hash keeps only tenants in flight.
        if r.inf ~= r.inf0 then
          if r.inf == 0 then
            infDel[#infDel + 1] = t
          else
            infSet[#infSet + 1] = t; infSet[#infSet + 1] = int(r.inf)
          end
        end
        for i, l in ipairs(LANES) do
          local p = r.pass[l]
          if p and p ~= r.pass0[l] then
            passSet[i][#passSet[i] + 1] = t
            passSet[i][#passSet[i] + 1] = fmt(p)
          end
        end
        if r.tat ~= r.tat0 then tatSet[#tatSet + 1] = t; tatSet[#tatSet + 1] = fmt(r.tat) end
        if cfg.fk then
          for i, l in ipairs(LANES) do
            local c = r.kv[l]
            if c and c ~= r.kv0[l] then
              kvSet[i][#kvSet[i] + 1] = t
              kvSet[i][#kvSet[i] + 1] = fmt(c)
              r.kv0[l] = c
            end
          end
        end
      end
      if BG and r.inf ~= r.inf0 then
        r.binf = math.max(0, budgetInFlight(r))
        counts[#counts + 1] = t
        counts[#counts + 1] = r.binf
      end
      r.dirty = false
      r.inf0, r.tat0 = r.inf, r.tat
      for _, l in ipairs(LANES) do r.pass0[l] = r.pass[l] end
    end
  end
  if #infSet > 0 then variadic('HSET', kInf, infSet) end
  if #infDel > 0 then variadic('HDEL', kInf, infDel) end
  if #tatSet > 0 then variadic('HSET', kTat, tatSet) end
  if #tatDel > 0 then variadic('HDEL', kTat, tatDel) end
  for i, l in ipairs(LANES) do
    if #passSet[i] > 0 then variadic('HSET', pKey(l), passSet[i]) end
    if #passDel[i] > 0 then variadic('HDEL', pKey(l), passDel[i]) end
    if #lenSet[i] > 0 then variadic('HSET', bKey(l), lenSet[i]) end
    if #lenDel[i] > 0 then variadic('HDEL', bKey(l), lenDel[i]) end
    if #kvSet[i] > 0 then variadic('HSET', kvKey(l), kvSet[i]) end
    if #kvDel[i] > 0 then variadic('HDEL', kvKey(l), kvDel[i]) end
  end
  if BG then budgetFlush(tenants, counts) end
end

-- The tenant's weight inside lane l: run-time override, else its lane weight, else its weight;
-- in the slow lane, a share of it.
local function weightIn(r, l)
  local w = r.w
  if r.lanes and r.lanes[l] then w = tonumber(r.lanes[l]) end
  if r.slow then w = w * cfg.slowShare end
  return w
end

local function deactivate(t)
  for _, l in ipairs(LANES) do redis.call('ZREM', rKey(l), t) end
end

-- Each lane's virtual time, read once per call (dispatch writes it last, and updates this copy).
local laneVt = {}
local function vtOf(l)
  local vt = laneVt[l]
  if vt == nil then
    vt = tonumber(redis.call('HGET', kState, sf('vt', l))) or 0
    laneVt[l] = vt
  end
  return vt
end

-- Puts a tenant back in turn, in every lane where it has work, if it is not paused, under its
-- cap and not waiting for its rate limit. A tenant that wakes up starts at the lane's current
-- virtual time: idleness earns no credit.
local function activate(t)
  if redis.call('ZSCORE', kLimited, t) then return end
  local r = tenant(t)
  if r.paused then return end
  if capped(r) then
    if BG and backlog(r) > 0 then budgetHold(t) end
    return
  end
  for _, l in ipairs(LANES) do
    if len(r, l) > 0 then
      local rk = rKey(l)
      if not redis.call('ZSCORE', rk, t) then
        local vt = vtOf(l)
        local pass = r.pass[l] or 0
        if pass < vt then pass = vt end
        redis.call('ZADD', rk, fmt(pass), t)
      end
    end
  end
end
