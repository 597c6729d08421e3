--[[
  Shared prelude of every fair-gate script (prepended at load time; not a command itself).
  KEYS[1]  gate base key  {<prefix>:<queue>}:~fair  (every key below derives from it: one slot)
  ARGV[1]  gate config, JSON: dw (default weight), dcap (default cap, 0 = none), k (max in a row),
           win (fixed window, 0 = auto), minWin, lease (ms), slowShare, rl (default rate limit
           "T:tol:max:per:burst", T and tol in ms, absent = none), lanes (lane names, priority order; absent = one lane ''),
           shares (reserved share of the window per lane)
  Keys: :ready[:<lane>] zset tenant->pass | :state hash vt,last,streak[,:<lane>], p1:<lane>,
        window, slots (live workers' total concurrency)
        :leases zset id->expiry | :transit zset id->sent at | :jobs hash id->tenant
        :data hash id->job json | :lane hash id->lane of jobs admitted within their lane's share
        | :slow set
        :limited zset tenant->ms when its rate limit lets the next job start
        :t:<tenant> hash w,dw,cap,dcap,inf,paused,slow,rl,drl,tat,dlanes,pass[:<lane>]
        :q:<tenant>[:<lane>] list of ids | :f:<tenant> zset of failures (score = time)
]]
local base = KEYS[1]
local cfg = cjson.decode(ARGV[1])
local kState = base .. ':state'
local kLeases = base .. ':leases'
local kTransit = base .. ':transit'
local kJobs = base .. ':jobs'
local kData = base .. ':data'
local kSlow = base .. ':slow'
local kLimited = base .. ':limited'
local kLaneOf = base .. ':lane'
local LANES = cfg.lanes or {''}
local function tKey(t) return base .. ':t:' .. t end
local function fKey(t) return base .. ':f:' .. t end
local function rKey(l)
  if l == '' then return base .. ':ready' end
  return base .. ':ready:' .. l
end
local function qKey(t, l)
  if l == nil or l == '' then return base .. ':q:' .. t end
  return base .. ':q:' .. t .. ':' .. l
end
-- Per-lane field name: the plain name for the single unnamed lane.
local function sf(field, l)
  if l == '' then return field end
  return field .. ':' .. l
end

-- Lua numbers lose digits through redis.call's default conversion: format them ourselves.
local function fmt(n) return string.format('%.17g', n) end

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function backlog(t)
  local n = 0
  for _, l in ipairs(LANES) do n = n + redis.call('LLEN', qKey(t, l)) end
  return n
end

-- "T:tol:max:per:burst" (emission interval and burst tolerance in ms, then the limit as given)
-- -> {T, tol}; "none" or nothing -> nil.
local function parseRate(s)
  if not s or s == 'none' then return nil end
  local T, tol = string.match(s, '^([^:]+):([^:]+)')
  return { tonumber(T), tonumber(tol) }
end

local TFIELDS = {'w', 'dw', 'cap', 'dcap', 'inf', 'paused', 'slow', 'rl', 'drl', 'tat', 'dlanes'}

local function loadTenant(t)
  local r = redis.call('HMGET', tKey(t), unpack(TFIELDS))
  local rate = r[8] or r[9] or cfg.rl
  local lanes = nil
  if r[11] and not r[1] then lanes = cjson.decode(r[11]) end
  return { w = tonumber(r[1]) or tonumber(r[2]) or cfg.dw,
           cap = tonumber(r[3]) or tonumber(r[4]) or cfg.dcap, inf = tonumber(r[5]) or 0,
           paused = r[6] == '1', slow = r[7] == '1', rl = parseRate(rate),
           tat = tonumber(r[10]) or 0, lanes = lanes }
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

-- Puts a tenant back in turn, in every lane where it has work, if it is not paused, under its
-- cap and not waiting for its rate limit. A tenant that wakes up starts at the lane's current
-- virtual time: idleness earns no credit.
local function activate(t)
  if redis.call('ZSCORE', kLimited, t) then return end
  local r = nil
  for _, l in ipairs(LANES) do
    local rk = rKey(l)
    if not redis.call('ZSCORE', rk, t) and redis.call('LLEN', qKey(t, l)) > 0 then
      r = r or loadTenant(t)
      if r.paused or (r.cap > 0 and r.inf >= r.cap) then return end
      local vt = tonumber(redis.call('HGET', kState, sf('vt', l))) or 0
      local pass = tonumber(redis.call('HGET', tKey(t), sf('pass', l))) or 0
      if pass < vt then pass = vt end
      redis.call('ZADD', rk, fmt(pass), t)
    end
  end
end

-- Tenants whose rate limit allows a start again go back in turn.
local function wakeLimited(now)
  local due = redis.call('ZRANGEBYSCORE', kLimited, '-inf', now, 'LIMIT', 0, 200)
  for _, t in ipairs(due) do
    redis.call('ZREM', kLimited, t)
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

-- Picks up to maxN jobs and leases them. A lane below its reserved share of the worker slots is
-- served first, in declaration order, even when the window is full (so a click never waits for
-- bulk work to drain); the rest of the window goes to the first lane with work. Inside a lane: lowest pass
-- first, at most k of one tenant in a row while another is ready, skipping tenants at their cap
-- and holding back tenants over their rate limit (GCRA on the tenant's tat).
-- Returns {id, json, priority, ...}: priority 0 with fewer than two lanes; else 1 while the lane
-- has fewer priority-1 jobs in flight than its share of the slots, 2 beyond it. BullMQ runs
-- priority 1 first, so each lane keeps its share of running jobs and a click runs next.
local function dispatch(maxN, now)
  wakeLimited(now)
  local win = cfg.win
  if win <= 0 then win = tonumber(redis.call('HGET', kState, 'window')) or cfg.minWin end
  local room = win - redis.call('ZCARD', kLeases)
  local budget = maxN
  local out = {}
  if room <= 0 and #LANES == 1 then return out end
  local lanes = {}
  -- Shares are of the workers' slots (running jobs), not of the window. A lane keeps up to twice
  -- its share of the slots in flight at priority 1 (one running, one staged per slot, so a slot
  -- it frees is refilled without waiting for the gate); BullMQ serves priority 1 in admission
  -- order, so when all lanes are busy the running split follows the shares. The first lane's
  -- share includes what no lane reserved (cfg.shares is built that way).
  local slots = tonumber(redis.call('HGET', kState, 'slots')) or 0
  for i, l in ipairs(LANES) do
    local s = redis.call('HMGET', kState, sf('vt', l), sf('last', l), sf('streak', l), 'p1:' .. l)
    local reserve = 0
    if #LANES > 1 and cfg.shares[i] > 0 then
      reserve = math.max(1, math.floor(2 * cfg.shares[i] * slots + 0.5))
    end
    lanes[i] = { l = l, vt = tonumber(s[1]) or 0, last = s[2] or '', streak = tonumber(s[3]) or 0,
                 p1 = tonumber(s[4]) or 0, reserve = reserve, empty = false, used = false }
  end
  local function pickLane()
    for _, s in ipairs(lanes) do
      if not s.empty and s.p1 < s.reserve then return s end
    end
    if room <= 0 then return nil end
    for _, s in ipairs(lanes) do
      if not s.empty then return s end
    end
    return nil
  end
  local guard = 0
  while budget > 0 and guard < 4 * maxN + 16 do
    guard = guard + 1
    local s = pickLane()
    if not s then break end
    local rk = rKey(s.l)
    local top = redis.call('ZRANGE', rk, 0, 1, 'WITHSCORES')
    if #top == 0 then
      s.empty = true
    else
      local t, pass = top[1], tonumber(top[2])
      if t == s.last and s.streak >= cfg.k and #top >= 4 then
        t, pass = top[3], tonumber(top[4])
      end
      local r = loadTenant(t)
      -- GCRA: the tenant's theoretical arrival time. A tenant that was waiting for its turn and
      -- is picked a little late (less than one interval) keeps its schedule, so wake-up latency
      -- does not lower its rate; an idle tenant starts from now.
      local tat = nil
      if r.rl then
        tat = r.tat
        if tat < now - r.rl[1] then tat = now end
      end
      if r.paused or (r.cap > 0 and r.inf >= r.cap) then
        deactivate(t)
      elseif tat and tat - now > r.rl[2] then
        deactivate(t)
        redis.call('ZADD', kLimited, fmt(tat - r.rl[2]), t)
      else
        local id = redis.call('LPOP', qKey(t, s.l))
        if not id then
          redis.call('ZREM', rk, t)
        else
          local payload = redis.call('HGET', kData, id)
          if not payload then
            redis.call('HDEL', kJobs, id)
            redis.call('HDEL', kLaneOf, id)
          else
            local inf = r.inf + 1
            local nextPass = pass + 1 / weightIn(r, s.l)
            if tat then
              redis.call('HSET', tKey(t), 'inf', inf, sf('pass', s.l), fmt(nextPass),
                         'tat', fmt(tat + r.rl[1]))
            else
              redis.call('HSET', tKey(t), 'inf', inf, sf('pass', s.l), fmt(nextPass))
            end
            redis.call('ZADD', kLeases, now + cfg.lease, id)
            redis.call('ZADD', kTransit, now, id)
            out[#out + 1] = id
            out[#out + 1] = payload
            if #LANES == 1 then
              out[#out + 1] = 0
            elseif s.p1 < s.reserve then
              out[#out + 1] = 1
              s.p1 = s.p1 + 1
              redis.call('HSET', kLaneOf, id, s.l)
            else
              out[#out + 1] = 2
            end
            if pass > s.vt then s.vt = pass end
            if t == s.last then s.streak = s.streak + 1 else s.last = t; s.streak = 1 end
            s.used = true
            room = room - 1
            budget = budget - 1
            if r.cap > 0 and inf >= r.cap then
              deactivate(t)
            elseif redis.call('LLEN', qKey(t, s.l)) == 0 then
              redis.call('ZREM', rk, t)
            else
              redis.call('ZADD', rk, fmt(nextPass), t)
            end
          end
        end
      end
    end
  end
  for _, s in ipairs(lanes) do
    if s.used then
      if s.l == '' then
        redis.call('HSET', kState, 'vt', fmt(s.vt), 'last', s.last, 'streak', s.streak)
      else
        redis.call('HSET', kState, sf('vt', s.l), fmt(s.vt), sf('last', s.l), s.last,
                   sf('streak', s.l), s.streak, 'p1:' .. s.l, s.p1)
      end
    end
  end
  return out
end

-- Frees one job's slot. outcome: c completed, f failed for good, x cancelled (no slow-lane count).
local function releaseOne(id, outcome, now, slowCfg, touched, events)
  local t = redis.call('HGET', kJobs, id)
  if not t then return end
  redis.call('HDEL', kJobs, id)
  redis.call('HDEL', kData, id)
  redis.call('ZREM', kLeases, id)
  redis.call('ZREM', kTransit, id)
  local lane = false
  if #LANES > 1 then lane = redis.call('HGET', kLaneOf, id) end
  if lane then
    redis.call('HDEL', kLaneOf, id)
    if redis.call('HINCRBY', kState, 'p1:' .. lane, -1) < 0 then
      redis.call('HSET', kState, 'p1:' .. lane, 0)
    end
  end
  local inf = redis.call('HINCRBY', tKey(t), 'inf', -1)
  if inf <= 0 and backlog(t) == 0 then
    -- Idle: drop the run-time fields, so a drained tenant leaves no key behind (a tenant that
    -- wakes up starts at the current virtual time anyway). Overrides, hints and a rate-limit
    -- time still ahead stay.
    redis.call('HDEL', tKey(t), 'inf')
    for _, l in ipairs(LANES) do redis.call('HDEL', tKey(t), sf('pass', l)) end
    local tat = tonumber(redis.call('HGET', tKey(t), 'tat'))
    if tat and tat <= now then redis.call('HDEL', tKey(t), 'tat') end
  elseif inf < 0 then
    redis.call('HSET', tKey(t), 'inf', 0)
  end
  if outcome == 'f' and slowCfg.threshold > 0 then
    local fk = fKey(t)
    redis.call('ZADD', fk, now, id .. '@' .. now)
    redis.call('ZREMRANGEBYSCORE', fk, '-inf', now - slowCfg.window)
    redis.call('PEXPIRE', fk, slowCfg.window)
    local count = redis.call('ZCARD', fk)
    if count >= slowCfg.threshold and redis.call('HGET', tKey(t), 'slow') ~= '1' then
      redis.call('HSET', tKey(t), 'slow', 1)
      redis.call('SADD', kSlow, t)
      events[#events + 1] = 'enter'
      events[#events + 1] = t
      events[#events + 1] = count
    end
  end
  touched[t] = true
end

-- Leaves the slow lane once failures in the window fall to the recovery level.
local function checkRecovery(t, now, slowCfg, events)
  if redis.call('HGET', tKey(t), 'slow') ~= '1' then
    redis.call('SREM', kSlow, t)
    return
  end
  local fk = fKey(t)
  redis.call('ZREMRANGEBYSCORE', fk, '-inf', now - slowCfg.window)
  local count = redis.call('ZCARD', fk)
  if count <= slowCfg.recoverAt then
    redis.call('HDEL', tKey(t), 'slow')
    redis.call('SREM', kSlow, t)
    events[#events + 1] = 'leave'
    events[#events + 1] = t
    events[#events + 1] = count
  end
end

-- Applies directory/tier hints {t: [weight|false, cap|false, rate|false, lanes json|false]}. A
-- changed rate limit starts the tenant afresh (its schedule was built at the old rate).
local function applyHints(hints)
  for t, h in pairs(hints) do
    local k = tKey(t)
    if (h[3] or false) ~= (redis.call('HGET', k, 'drl') or false) then redis.call('HDEL', k, 'tat') end
    local fields = {'dw', 'dcap', 'drl', 'dlanes'}
    for i = 1, 4 do
      if h[i] then redis.call('HSET', k, fields[i], h[i]) else redis.call('HDEL', k, fields[i]) end
    end
  end
end
