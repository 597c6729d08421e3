--[[
  Shared prelude of every fair-gate script (prepended at load time, after tkp(t) of
  TENANT_KEY_PART_LUA; not a command itself).
  KEYS[1]  gate base key  {<prefix>:<queue>}:~fair  (every key below derives from it: one slot)
  ARGV[1]  gate config, JSON: dw (default weight), dcap (default cap, 0 = none), k (max in a row),
           win (fixed window, 0 = auto), minWin, lease (ms), resend (ms before an unacknowledged
           send is re-sent), slowShare, rl (default rate limit "T:tol:max:per:burst", T and tol in
           ms, absent = none), lanes (lane names, priority order; absent = one lane ''),
           tp (true: priority by turn, see dispatch),
           shares (reserved share of the window per lane)
  Keys: :ready[:<lane>] zset tenant->pass | :state hash vt,last,streak[,:<lane>], p1:<lane>,
        window, slots (live workers' total concurrency)
        :leases zset id->2*expiry (+1 once BullMQ has the job; even = in transit, re-sent when
        it expires) | :jobs hash id->"<json>\n<tenant>" (the job and its data, one value)
        :lane hash id->lane of jobs admitted within their lane's share | :slow set
        :limited zset tenant->ms when its rate limit lets the next job start
        :t:<tkp(tenant)> hash w,dw,cap,dcap,inf,paused,slow,rl,drl,tat,dlanes,pass[:<lane>]
        :q:<tkp(tenant)>[:<lane>] list of ids | :f:<tkp(tenant)> zset of failures (score = time)
  Every script call reads each tenant's hash once (HMGET), works on that copy, and writes it back
  once at the end (flushTenants); multi-element writes are variadic, in chunks under unpack's limit.
]]
local base = KEYS[1]
local cfg = cjson.decode(ARGV[1])
local kState = base .. ':state'
local kLeases = base .. ':leases'
local kJobs = base .. ':jobs'
local kSlow = base .. ':slow'
local kLimited = base .. ':limited'
local kLaneOf = base .. ':lane'
local LANES = cfg.lanes or {''}
local CHUNK = 4000
local function tKey(t) return base .. ':t:' .. tkp(t) end
local function fKey(t) return base .. ':f:' .. tkp(t) end
local function rKey(l)
  if l == '' then return base .. ':ready' end
  return base .. ':ready:' .. l
end
local function qKey(t, l)
  if l == nil or l == '' then return base .. ':q:' .. tkp(t) end
  return base .. ':q:' .. tkp(t) .. ':' .. l
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

-- One variadic command over a flat list, in chunks that unpack can take.
local function variadic(cmd, key, list, extra)
  for i = 1, #list, CHUNK do
    local last = math.min(#list, i + CHUNK - 1)
    if extra then
      redis.call(cmd, key, extra, unpack(list, i, last))
    else
      redis.call(cmd, key, unpack(list, i, last))
    end
  end
end

-- HMGET of many fields, chunked; returns one flat list.
local function hmgetMany(key, fields)
  local out = {}
  for i = 1, #fields, CHUNK do
    local part = redis.call('HMGET', key, unpack(fields, i, math.min(#fields, i + CHUNK - 1)))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end

-- "<json>\n<tenant>" -> tenant, json (JSON has no raw newline; a tenant id might)
local function splitJob(v)
  local at = string.find(v, '\n', 1, true)
  return string.sub(v, at + 1), string.sub(v, 1, at - 1)
end

-- "T:tol:max:per:burst" (emission interval and burst tolerance in ms, then the limit as given)
-- -> {T, tol}; "none" or nothing -> nil.
local function parseRate(s)
  if not s or s == 'none' then return nil end
  local T, tol = string.match(s, '^([^:]+):([^:]+)')
  return { tonumber(T), tonumber(tol) }
end

local TFIELDS = {'w', 'dw', 'cap', 'dcap', 'inf', 'paused', 'slow', 'rl', 'drl', 'tat', 'dlanes'}
local NTF = #TFIELDS
local LOADFIELDS = {}
for i, f in ipairs(TFIELDS) do LOADFIELDS[i] = f end
for i, l in ipairs(LANES) do LOADFIELDS[NTF + i] = sf('pass', l) end

-- The tenants this call read, by id: one HMGET each, written back once by flushTenants.
local tenants = {}

local function tenant(t)
  local r = tenants[t]
  if r then return r end
  local h = redis.call('HMGET', tKey(t), unpack(LOADFIELDS))
  local rate = h[8] or h[9] or cfg.rl
  local lanes = nil
  if h[11] and not h[1] then lanes = cjson.decode(h[11]) end
  local pass = {}
  for i, l in ipairs(LANES) do pass[l] = tonumber(h[NTF + i]) end
  r = { t = t, w = tonumber(h[1]) or tonumber(h[2]) or cfg.dw,
        cap = tonumber(h[3]) or tonumber(h[4]) or cfg.dcap, inf = tonumber(h[5]) or 0,
        paused = h[6] == '1', slow = h[7] == '1', rl = parseRate(rate),
        tat = tonumber(h[10]) or 0, lanes = lanes, pass = pass, len = {}, dirty = false }
  r.inf0, r.tat0 = r.inf, r.tat
  tenants[t] = r
  return r
end

-- Forgets a tenant's copy (after a script changed its hash directly).
local function forget(t) tenants[t] = nil end

local function len(r, l)
  local n = r.len[l]
  if n == nil then
    n = redis.call('LLEN', qKey(r.t, l))
    r.len[l] = n
  end
  return n
end

local function backlog(r)
  local n = 0
  for _, l in ipairs(LANES) do n = n + len(r, l) end
  return n
end

local function capped(r) return r.cap > 0 and r.inf >= r.cap end

-- Writes back what this call changed in each tenant: in-flight count, passes, rate schedule. A
-- drained tenant (nothing in flight, empty backlog) loses its run-time fields, so it leaves no
-- key behind (a tenant that wakes up starts at the current virtual time anyway). Overrides,
-- hints and a rate-limit time still ahead stay.
local function flushTenants(now)
  for t, r in pairs(tenants) do
    if r.dirty then
      local k = tKey(t)
      if r.inf <= 0 and backlog(r) == 0 then
        local drop = {'inf'}
        for _, l in ipairs(LANES) do drop[#drop + 1] = sf('pass', l) end
        if r.tat > 0 and r.tat <= now then drop[#drop + 1] = 'tat' end
        redis.call('HDEL', k, unpack(drop))
        if r.tat > now and r.tat ~= r.tat0 then redis.call('HSET', k, 'tat', fmt(r.tat)) end
      else
        if r.inf < 0 then r.inf = 0 end
        local set = {'inf', r.inf}
        for _, l in ipairs(LANES) do
          if r.pass[l] then
            set[#set + 1] = sf('pass', l)
            set[#set + 1] = fmt(r.pass[l])
          end
        end
        if r.tat ~= r.tat0 then
          set[#set + 1] = 'tat'
          set[#set + 1] = fmt(r.tat)
        end
        redis.call('HSET', k, unpack(set))
      end
      r.dirty = false
      r.inf0, r.tat0 = r.inf, r.tat
    end
  end
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
  local r = tenant(t)
  if r.paused or capped(r) then return end
  for _, l in ipairs(LANES) do
    if len(r, l) > 0 then
      local rk = rKey(l)
      if not redis.call('ZSCORE', rk, t) then
        local vt = tonumber(redis.call('HGET', kState, sf('vt', l))) or 0
        local pass = r.pass[l] or 0
        if pass < vt then pass = vt end
        redis.call('ZADD', rk, fmt(pass), t)
      end
    end
  end
end

-- Tenants whose rate limit allows a start again go back in turn.
local function wakeLimited(now)
  local due = redis.call('ZRANGEBYSCORE', kLimited, '-inf', now, 'LIMIT', 0, 200)
  if #due == 0 then return end
  variadic('ZREM', kLimited, due)
  for _, t in ipairs(due) do activate(t) end
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

-- Candidates of one lane's ready set, as a binary heap on (pass, tenant) (the zset's own order),
-- loaded from the set in pages. The set is not written while a dispatch runs (its changes are
-- collected and written at the end), so pages line up and every tenant below `bound` (the first
-- pass not loaded yet) is in the heap.
local function less(a, b)
  if a[2] ~= b[2] then return a[2] < b[2] end
  return a[1] < b[1]
end
local function heapPush(h, e)
  h[#h + 1] = e
  local i = #h
  while i > 1 do
    local p = math.floor(i / 2)
    if less(h[i], h[p]) then h[i], h[p] = h[p], h[i]; i = p else break end
  end
end
local function heapPop(h)
  local top = h[1]
  local n = #h
  h[1] = h[n]
  h[n] = nil
  n = n - 1
  local i = 1
  while true do
    local l, r, m = 2 * i, 2 * i + 1, i
    if l <= n and less(h[l], h[m]) then m = l end
    if r <= n and less(h[r], h[m]) then m = r end
    if m == i then break end
    h[i], h[m] = h[m], h[i]
    i = m
  end
  return top
end

local function loadPage(s, size)
  local rows = redis.call('ZRANGE', rKey(s.l), s.off, s.off + size, 'WITHSCORES')
  local n = #rows / 2
  local take = n
  if n > size then
    take = size
    s.bound = { rows[2 * n - 1], tonumber(rows[2 * n]) }
  else
    s.bound = nil
  end
  for i = 1, take do heapPush(s.heap, { rows[2 * i - 1], tonumber(rows[2 * i]) }) end
  s.off = s.off + take
end

-- The lowest candidate still valid (its pass not beyond what is loaded), removed from the heap.
local function popCandidate(s, size)
  while true do
    local top = s.heap[1]
    if top and not (s.bound and less(s.bound, top)) then return heapPop(s.heap) end
    if not s.bound then return nil end
    loadPage(s, size)
  end
end

-- Picks up to maxN jobs and leases them. A lane below its reserved share of the worker slots is
-- served first, in declaration order, even when the window is full (so a click never waits for
-- bulk work to drain); the rest of the window goes to the first lane with work. Inside a lane: lowest pass
-- first, at most k of one tenant in a row while another is ready, skipping tenants at their cap
-- and holding back tenants over their rate limit (GCRA on the tenant's tat).
-- Returns {id, json, priority, ...}: with cfg.tp (one lane) the tenant's in-flight count after
-- the pick, so a tenant that just woke up runs ahead of a flood already admitted; else 0 with
-- fewer than two lanes; else 1 while the lane
-- has fewer priority-1 jobs in flight than its share of the slots, 2 beyond it. BullMQ runs
-- priority 1 first, so each lane keeps its share of running jobs and a click runs next.
local function dispatch(maxN, now)
  wakeLimited(now)
  local win = cfg.win
  if win <= 0 then win = tonumber(redis.call('HGET', kState, 'window')) or cfg.minWin end
  local room = win - redis.call('ZCARD', kLeases)
  local budget = maxN
  local out = {}
  local slots = 0
  if #LANES > 1 or cfg.tp then slots = tonumber(redis.call('HGET', kState, 'slots')) or 0 end
  -- With priority by turn, a tenant with nothing in flight may go beyond a full window (by at
  -- most the workers' slots in all): its job runs next, ahead of the flood admitted before it.
  local extra = 0
  if cfg.tp then extra = math.max(0, slots + math.min(room, 0)) end
  if room <= 0 and #LANES == 1 and extra <= 0 then return out end
  local page = math.min(maxN, math.max(room, extra, 1)) + 1
  local lanes = {}
  -- Shares are of the workers' slots (running jobs), not of the window. A lane keeps up to twice
  -- its share of the slots in flight at priority 1 (one running, one staged per slot, so a slot
  -- it frees is refilled without waiting for the gate); BullMQ serves priority 1 in admission
  -- order, so when all lanes are busy the running split follows the shares. The first lane's
  -- share includes what no lane reserved (cfg.shares is built that way).
  for i, l in ipairs(LANES) do
    local st = redis.call('HMGET', kState, sf('vt', l), sf('last', l), sf('streak', l), 'p1:' .. l)
    local reserve = 0
    if #LANES > 1 and cfg.shares[i] > 0 then
      reserve = math.max(1, math.floor(2 * cfg.shares[i] * slots + 0.5))
    end
    lanes[i] = { l = l, vt = tonumber(st[1]) or 0, last = st[2] or '', streak = tonumber(st[3]) or 0,
                 p1 = tonumber(st[4]) or 0, reserve = reserve, empty = false, used = false,
                 heap = {}, off = 0, bound = nil, loaded = false, fin = {}, take = {} }
  end
  local function pickLane()
    for _, s in ipairs(lanes) do
      if not s.empty and s.p1 < s.reserve then return s end
    end
    if room <= 0 and extra <= 0 then return nil end
    for _, s in ipairs(lanes) do
      if not s.empty then return s end
    end
    return nil
  end
  local off = {}        -- tenants out of turn in every lane (paused, capped, rate-limited)
  local picks = {}      -- {tenant, lane state, priority} in admission order
  local guard = 0
  while budget > 0 and guard < 4 * maxN + 16 do
    guard = guard + 1
    local s = pickLane()
    if not s then break end
    if not s.loaded then
      loadPage(s, page)
      s.loaded = true
    end
    -- Beyond the window only a tenant that just woke up (nothing in flight, its pass at the
    -- lane's virtual time), among the candidates loaded.
    local over = cfg.tp and room <= 0
    if over then s.bound = nil end
    local function skip(e)
      return off[e[1]] or (over and (e[2] > s.vt or tenant(e[1]).inf > 0))
    end
    local c = popCandidate(s, page)
    while c and skip(c) do c = popCandidate(s, page) end
    if c and c[1] == s.last and s.streak >= cfg.k then
      local other = popCandidate(s, page)
      while other and skip(other) do other = popCandidate(s, page) end
      if other then
        heapPush(s.heap, c)
        c = other
      end
    end
    if not c then
      s.empty = true
    else
      local t, pass = c[1], c[2]
      local r = tenant(t)
      -- GCRA: the tenant's theoretical arrival time. A tenant that was waiting for its turn and
      -- is picked a little late (less than one interval) keeps its schedule, so wake-up latency
      -- does not lower its rate; an idle tenant starts from now.
      local tat = nil
      if r.rl then
        tat = r.tat
        if tat < now - r.rl[1] then tat = now end
      end
      if r.paused or capped(r) then
        off[t] = true
      elseif tat and tat - now > r.rl[2] then
        off[t] = true
        redis.call('ZADD', kLimited, fmt(tat - r.rl[2]), t)
      elseif len(r, s.l) - (s.take[t] or 0) <= 0 then
        s.fin[t] = false
      else
        s.take[t] = (s.take[t] or 0) + 1
        r.inf = r.inf + 1
        r.dirty = true
        local nextPass = pass + 1 / weightIn(r, s.l)
        r.pass[s.l] = nextPass
        if tat then r.tat = tat + r.rl[1] end
        local priority = 0
        if cfg.tp then
          -- The tenant's turn: its count in flight (BullMQ's priorities stop at 2^21).
          priority = math.min(r.inf, 2097152)
        elseif #LANES > 1 then
          if s.p1 < s.reserve then
            priority = 1
            s.p1 = s.p1 + 1
          else
            priority = 2
          end
        end
        picks[#picks + 1] = { t, s, priority }
        if pass > s.vt then s.vt = pass end
        if t == s.last then s.streak = s.streak + 1 else s.last = t; s.streak = 1 end
        s.used = true
        if over then extra = extra - 1 end
        room = room - 1
        budget = budget - 1
        if capped(r) then
          off[t] = true
        elseif len(r, s.l) - s.take[t] <= 0 then
          s.fin[t] = false
        else
          s.fin[t] = nextPass
          heapPush(s.heap, { t, nextPass })
        end
      end
    end
  end
  -- Writes, all at the end: the ready sets, the backlogs (LPOP count per tenant), the leases.
  local taken = {}
  for _, s in ipairs(lanes) do
    local rem, add = {}, {}
    for t, p in pairs(s.fin) do
      if p == false or off[t] then rem[#rem + 1] = t else add[#add + 1] = fmt(p); add[#add + 1] = t end
    end
    if #rem > 0 then variadic('ZREM', rKey(s.l), rem) end
    if #add > 0 then variadic('ZADD', rKey(s.l), add) end
    for t, n in pairs(s.take) do
      local ids = redis.call('LPOP', qKey(t, s.l), n)
      local r = tenants[t]
      r.len[s.l] = r.len[s.l] - n
      taken[s.l .. '\n' .. t] = { ids, 0 }
    end
  end
  for t in pairs(off) do deactivate(t) end
  if #picks == 0 then return out end
  local ids, lanesOf = {}, {}
  for i, p in ipairs(picks) do
    local q = taken[p[2].l .. '\n' .. p[1]]
    q[2] = q[2] + 1
    ids[i] = q[1][q[2]]
  end
  local vals = hmgetMany(kJobs, ids)
  local leases = {}
  local transit = 2 * (now + (cfg.resend or 30000))
  for i, p in ipairs(picks) do
    local v = vals[i]
    if v then
      local _, json = splitJob(v)
      out[#out + 1] = ids[i]
      out[#out + 1] = json
      out[#out + 1] = p[3]
      leases[#leases + 1] = transit
      leases[#leases + 1] = ids[i]
      if p[3] == 1 then
        lanesOf[#lanesOf + 1] = ids[i]
        lanesOf[#lanesOf + 1] = p[2].l
      end
    else
      -- Listed without a record (removed meanwhile): it takes no slot.
      local r = tenants[p[1]]
      r.inf = r.inf - 1
      if p[3] == 1 then p[2].p1 = p[2].p1 - 1 end
    end
  end
  if #leases > 0 then variadic('ZADD', kLeases, leases) end
  if #lanesOf > 0 then variadic('HSET', kLaneOf, lanesOf) end
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

-- BullMQ has these jobs now: their leases stop counting as in transit (a released job's lease is
-- gone already, and XX does not bring it back).
local function ack(ids, now)
  if #ids == 0 then return end
  local score = 2 * (now + cfg.lease) + 1
  local args = {}
  for _, id in ipairs(ids) do
    args[#args + 1] = score
    args[#args + 1] = id
  end
  variadic('ZADD', kLeases, args, 'XX')
end

-- Counts one final failure towards the tenant's slow lane.
local function countFailure(r, id, now, slowCfg, events)
  local fk = fKey(r.t)
  redis.call('ZADD', fk, now, id .. '@' .. now)
  redis.call('ZREMRANGEBYSCORE', fk, '-inf', now - slowCfg.window)
  redis.call('PEXPIRE', fk, slowCfg.window)
  local count = redis.call('ZCARD', fk)
  if count >= slowCfg.threshold and not r.slow then
    r.slow = true
    redis.call('HSET', tKey(r.t), 'slow', 1)
    redis.call('SADD', kSlow, r.t)
    events[#events + 1] = 'enter'
    events[#events + 1] = r.t
    events[#events + 1] = count
  end
end

-- Frees the slots of finished jobs. pairs: flat {id, outcome, ...}; outcome: c completed,
-- f failed for good, x cancelled (no slow-lane count). Adds each tenant freed to `touched`.
local function releaseMany(pairsList, now, slowCfg, touched, events)
  if #pairsList == 0 then return end
  local ids, outcomes, seen = {}, {}, {}
  for i = 1, #pairsList, 2 do
    if not seen[pairsList[i]] then
      seen[pairsList[i]] = true
      ids[#ids + 1] = pairsList[i]
      outcomes[#ids] = pairsList[i + 1]
    end
  end
  local vals = hmgetMany(kJobs, ids)
  local gone, p1s = {}, {}
  for i, id in ipairs(ids) do
    local v = vals[i]
    if v then
      gone[#gone + 1] = id
      local t = splitJob(v)
      local r = tenant(t)
      r.inf = r.inf - 1
      r.dirty = true
      touched[t] = true
      if outcomes[i] == 'f' and slowCfg.threshold > 0 then
        countFailure(r, id, now, slowCfg, events)
      end
      if #LANES > 1 then p1s[#p1s + 1] = id end
    end
  end
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
    redis.call('HDEL', tKey(t), 'slow')
    redis.call('SREM', kSlow, t)
    events[#events + 1] = 'leave'
    events[#events + 1] = t
    events[#events + 1] = count
  end
end

-- After releases: a tenant held back by its cap may be in turn again; the slow lane may end.
local function afterRelease(touched, now, slowCfg, events)
  for t in pairs(touched) do
    local r = tenants[t]
    if slowCfg.threshold > 0 and r.slow then checkRecovery(t, now, slowCfg, events) end
    if r.cap > 0 then activate(t) end
  end
end

-- Applies directory/tier hints, a flat JSON list {tenant, [weight|false, cap|false, rate|false,
-- lanes json|false], ...}. A changed rate limit starts the tenant afresh (its schedule was built
-- at the old rate). Returns the tenants it touched.
local function applyHints(hints)
  local changed = {}
  for i = 1, #hints, 2 do
    local t, h = hints[i], hints[i + 1]
    local k = tKey(t)
    if (h[3] or false) ~= (redis.call('HGET', k, 'drl') or false) then redis.call('HDEL', k, 'tat') end
    local fields = {'dw', 'dcap', 'drl', 'dlanes'}
    for j = 1, 4 do
      if h[j] then redis.call('HSET', k, fields[j], h[j]) else redis.call('HDEL', k, fields[j]) end
    end
    forget(t)
    changed[#changed + 1] = t
  end
  return changed
end
