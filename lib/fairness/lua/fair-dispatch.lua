--- @include "fair-keys"
--- @include "../modes/budget/fair-budget"
--- @include "fair-tenants"
--- @include "../modes/rate-limit/fair-rate-wake"
--- @include "../modes/time-share/fair-time"
--- @include "../modes/floors/fair-floor"
--- @include "../modes/fair-keys/fair-fairkey"
--- @include "fair-bull"
--- @include "fair-turns"
--[[
  Fair-gate part (every admitting command includes it): dispatch, the admission path (stride scheduling over the
  lanes' ready sets, caps, rate limits, lanes' shares, priority by turn).
]]
-- Candidates of one lane's ready set, as a binary heap on (pass, tenant) (the zset's own order),
-- loaded from the set in pages. The set is not written while a dispatch runs (its changes are
-- collected and written at the end), so pages line up and every tenant below `bound` (the first
-- pass not loaded yet) is in the heap.
-- (less, heapPush and heapPop: fair-keys.lua.)
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
  local page = {}
  for i = 1, take do
    page[i] = rows[2 * i - 1]
    heapPush(s.heap, { rows[2 * i - 1], tonumber(rows[2 * i]) })
  end
  -- The page's tenants in one batch: a pick then reads no tenant on its own.
  loadTenants(page)
  if TS then loadTimes(page) end
  -- A tenant in turn has a backlog: a zero count (a gate written before the counts were kept)
  -- is read from its list once, and written back with the rest.
  for _, t in ipairs(page) do
    local r = tenants[t]
    if len(r, s.l) == 0 then r.len[s.l] = backlogLength(t, s.l) end
  end
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

-- Picks up to maxN jobs, leases them and moves them into BullMQ's wait list or prioritized set
-- (moveIntoBull, fair-bull.lua). A lane below its reserved share of the worker slots is
-- served first, in declaration order, even when the window is full (so a click never waits for
-- bulk work to drain); the rest of the window goes to the first lane with work. Inside a lane: lowest pass
-- first, at most k of one tenant in a row while another is ready, skipping tenants at their cap
-- and holding back tenants over their rate limit (GCRA on the tenant's tat).
-- Returns the ids it admitted. Each job's priority (see moveIntoBull): with cfg.tp (one lane)
-- the tenant's in-flight count after
-- the pick, so a tenant that just woke up runs ahead of a flood already admitted; else 0 with
-- fewer than two lanes; else 1 while the lane
-- has fewer priority-1 jobs in flight than its share of the slots, 2 beyond it. BullMQ runs
-- priority 1 first, so each lane keeps its share of running jobs and a click runs next.
-- -1 for every job of a tenant with a floor (fair-floor.lua): ahead of all the others.
-- Whether a tenant's next job goes ahead (to the head of the wait list, see dispatchOnce), n
-- being its jobs in flight with this one and `rest` its backlog after it: `small`, its whole work
-- fits in its share of the window (a tenant that woke up with a few jobs behind a flood);
-- `sparse`, it has nothing else in flight (its first job, as a new flow in fq_codel). Admission
-- keeps its turns, so weights hold.
-- (small: heads with two slots or more per tenant in turn; sparse: with room in the window for
-- two jobs or more per tenant in turn; with more tenants than that, every tenant would go ahead
-- and heads would turn the wait list into a stack.)
-- beyond: whether it may also be admitted beyond a full window (by at most the workers' slots
-- in all): small only, so a few jobs behind a flood all start at once. A sparse tenant's next
-- job waits for room like the others: beyond the window, at one slot, it would be served before
-- every turn of the flood's instead of in its own.
local function beyond(n, rest, small, winShare)
  return small and n + rest <= winShare
end
local function ahead(n, rest, small, sparse, winShare)
  return beyond(n, rest, small, winShare) or (sparse and n == 1)
end

-- A candidate out of turn: paused, capped or rate-limited in this call (off), or, beyond the
-- window (over), a tenant that may not go there: with priority by turn (heads false), one with
-- its share of the slots in flight already (share: the workers' slots over the tenants in turn,
-- at least 1); with heads of the wait list, one that may not go beyond it (`beyond`).
local function skipped(e, s, off, over, share, h)
  if off[e[1]] then return true end
  if not over then return false end
  local r = tenant(e[1])
  if not h then return r.inf >= share end
  return not beyond(r.inf + 1, len(r, s.l) - (s.take[e[1]] or 0) - 1, h.small, h.winShare)
end

local function dispatchOnce(maxN, now)
  wakeLimited(now)
  local st0 = redis.call('HMGET', kState, 'window', 'slots', 'below')
  local floors = floorCandidates(st0[3])
  local win = cfg.win
  if win <= 0 then win = tonumber(st0[1]) or cfg.minWin end
  local room = win - redis.call('ZCARD', kLeases)
  local budget = maxN
  local out = {}
  local slots = 0
  if #LANES > 1 or cfg.tp then slots = tonumber(st0[2]) or 0 end
  -- Without lanes or priority by turn, a light tenant's job is put at the head of BullMQ's wait
  -- list instead of behind the flood admitted before it (moveIntoBull, priority -2): a tenant
  -- with no more than its share of the workers' slots in flight (the slots over the tenants in
  -- turn, with at least two per tenant), or one whose next job goes ahead (`ahead`: small or
  -- sparse). Admission itself keeps its turns, so weights hold. (h: the heads' figures of this
  -- call, for `skipped`; nil with lanes or priority by turn.)
  local h = nil
  local frontShare = 0
  if #LANES == 1 and not cfg.tp then
    local inTurn = math.max(1, redis.call('ZCARD', rKey('')))
    frontShare = math.floor((tonumber(st0[2]) or 0) / inTurn)
    local winShare = math.floor(win / inTurn)
    h = { small = inTurn >= 2 and frontShare >= 2, sparse = inTurn >= 2 and winShare >= 2,
          winShare = winShare }
    if frontShare < 2 then frontShare = 0 end
  end
  -- A tenant below its share of the slots (priority by turn) or whose next job goes ahead (heads
  -- of the wait list) may go beyond a full window, by at most the workers' slots in all: its
  -- jobs run next, ahead of the flood admitted before them, and a tenant that wakes up gets its
  -- share at once instead of one job per slot freed. (share: what `skipped` checks with priority
  -- by turn.)
  local extra, share = 0, 1
  if cfg.tp then
    extra = math.max(0, slots + math.min(room, 0))
    if extra > 0 then
      share = math.max(1, math.floor(slots / math.max(1, redis.call('ZCARD', rKey('')))))
    end
  elseif h and h.small then
    extra = math.max(0, (tonumber(st0[2]) or 0) + math.min(room, 0))
  end
  if room <= 0 and #LANES == 1 and extra <= 0 and not floors then return out, 0 end
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
  if floors then
    -- Floors go beyond a full window by at most twice the workers' slots (one running, one
    -- staged per slot; cfg.minWin before a worker joined), ahead of priority by turn's extra:
    -- however many floor tenants show up, BullMQ's admitted jobs stay bounded. Those left below
    -- their floor stay in :below (fair-floor.lua) and are counted for a warning.
    local beyond = 2 * math.max(tonumber(st0[2]) or 0, cfg.minWin)
    local bound = math.max(0, math.min(budget, room + beyond))
    local n = floorPicks(lanes, picks, off, bound, now)
    if n >= bound then
      for _, t in ipairs(floorLoaded) do
        if tenants[t] and belowFloor(tenants[t], now) then
          floorsBounded(now)
          break
        end
      end
    end
    room = room - n
    budget = budget - n
  end
  while budget > 0 and guard < 4 * maxN + 16 do
    guard = guard + 1
    local s = pickLane()
    if not s then break end
    if not s.loaded then
      loadPage(s, page)
      s.loaded = true
    end
    -- Beyond the window only a tenant below its share of the slots (or small: heads of the wait
    -- list), among the candidates loaded.
    local over = extra > 0 and room <= 0
    if over then s.bound = nil end
    local c = popCandidate(s, page)
    while c and skipped(c, s, off, over, share, h) do c = popCandidate(s, page) end
    if c and c[1] == s.last and s.streak >= cfg.k then
      local other = popCandidate(s, page)
      while other and skipped(other, s, off, over, share, h) do
        other = popCandidate(s, page)
      end
      if other then
        -- The streak rule, not its pass, gives this turn away: the leader keeps no credit for it
        -- (its pass goes up to the turn's), else a leader whose weight asks more than k in a row
        -- (a slow-lane tenant beside it, a weight above k) builds a lag that comes due as more
        -- turns once the weights change.
        if other[2] > c[2] then
          c[2] = other[2]
          local lr = tenants[c[1]]
          lr.pass[s.l] = other[2]
          lr.dirty = true
          s.fin[c[1]] = other[2]
        end
        heapPush(s.heap, c)
        c = other
      end
    end
    if not c then
      s.empty = true
    else
      local t, pass = c[1], c[2]
      local r = tenant(t)
      -- GCRA: the tenant's theoretical arrival time, now where it is past. A tenant its rate
      -- held back, woken in this call (r.woke, wakeLimited) and picked a little late (less than
      -- one interval) keeps its schedule, so wake-up latency does not lower its rate. Any other
      -- (idle, or held by its cap, pause or turn) starts from now: a spell it did not wait for
      -- its rate earns no credit, else its next start could follow the one before by less than
      -- the interval (burst + elapsed / interval is the most in any stretch; as fair-floor.lua).
      local tat = nil
      if r.rl then
        tat = r.tat
        if tat < now and not (r.woke and tat >= now - r.rl[1]) then tat = now end
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
        local nextPass = pass + (TS and turnCost(r) or 1) / weightIn(r, s.l)
        r.pass[s.l] = nextPass
        if tat then r.tat = tat + r.rl[1] end
        local priority = 0
        if r.min > 0 then
          priority = -1
        elseif h and (r.inf <= frontShare
                      or ahead(r.inf, len(r, s.l) - s.take[t], h.small, h.sparse, h.winShare)) then
          priority = -2
        elseif cfg.dt then
          -- The tenant's turn level, shared with the jobs that skip the gate (fair-turns.lua).
          priority = turnLevels(t, weightIn(r, s.l), 1, true)[1]
        elseif cfg.tp then
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
        -- true: a turn of the rotation (its pass and rate step are given back if it misses).
        picks[#picks + 1] = { t, s, priority, true }
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
  -- A backlog id BullMQ no longer holds in its delayed set (removed by job.remove, clean, drain
  -- or obliterate, or moved by promote) is dropped as it is taken, and the tenant's next id taken
  -- in its place, up to `scan` such ids a call: a pick is a turn, and a capped tenant's turns
  -- each going to one removed id stalled its next jobs for as many ticks as it held ids.
  local taken, live, stale, scan = {}, {}, {}, 1000
  -- Up to n ids of tenant t's backlog in lane l, its count kept (a shorter backlog than its
  -- count says, never expected, is empty now).
  local function takeIds(l, t, r, n)
    local page
    if cfg.fk then
      -- With fair keys the tenant's keys take their turns (fair-fairkey.lua).
      page = takeKeyed(t, r, l, n)
    else
      page = redis.call('LPOP', qKey(t, l), n) or {}
    end
    r.len[l] = r.len[l] - n
    if #page < n then r.len[l] = 0 end
    return page
  end
  local all = {}
  for _, s in ipairs(lanes) do
    local got = {}
    taken[s.l] = got
    local rem, add = {}, {}
    for t, p in pairs(s.fin) do
      if p == false or off[t] then rem[#rem + 1] = t else add[#add + 1] = fmt(p); add[#add + 1] = t end
    end
    if #rem > 0 then variadic('ZREM', rKey(s.l), rem) end
    if #add > 0 then variadic('ZADD', rKey(s.l), add) end
    for t, n in pairs(s.take) do
      local page = takeIds(s.l, t, tenants[t], n)
      for _, id in ipairs(page) do all[#all + 1] = id end
      got[t] = { page, 0, n }
    end
  end
  -- Which ids the gate still holds, in one read: in BullMQ's delayed set at the hold score
  -- (isHeld). An id gone (removed, promoted) or in the delayed set at another score (a promoted
  -- job back for its retry's backoff, a changeDelay: BullMQ's own delay now, counted by the gate
  -- once seen running) is not the gate's to admit; a tenant that met such ids takes more in
  -- their place (rare: after another client acted on held jobs).
  local jd = cfg.jp .. 'delayed'
  local held, k = readMany('ZMSCORE', jd, all), 0
  for _, s in ipairs(lanes) do
    for t, g in pairs(taken[s.l]) do
      local page, n, ids = g[1], g[3], {}
      local want, scores, at0 = n, held, k
      k = k + #page
      while true do
        for i, id in ipairs(page) do
          if isHeld(scores[at0 + i]) then
            ids[#ids + 1] = id
            live[id] = true
          else
            stale[#stale + 1] = id
          end
        end
        if #ids >= n or #page < want or #stale >= scan then break end
        want = n - #ids
        page = takeIds(s.l, t, tenants[t], want)
        scores, at0 = readMany('ZMSCORE', jd, page), 0
      end
      g[1], g[3] = ids, nil
    end
  end
  for t in pairs(off) do
    deactivate(t)
    if BG and capped(tenants[t]) and backlog(tenants[t]) > 0 then budgetHold(t) end
  end
  if #picks == 0 then return out, 0 end
  local ids, at, lanesOf = {}, {}, {}
  for i, p in ipairs(picks) do
    local q = taken[p[2].l][p[1]]
    q[2] = q[2] + 1
    local id = q[1][q[2]]
    if id then
      ids[#ids + 1] = id
      at[i] = #ids
    end
  end
  -- Every id taken is in BullMQ's delayed set (live, above): a job another client set running
  -- is counted by the tick (fair-tick.lua). Each held job's name, own priority and stored
  -- options, one read each: vals[i] becomes the
  -- record the gate keeps while the job is admitted (its tenant, its name for share 'time').
  -- An id twice in this call (a job removed while held and added again under its id: its old
  -- entry stays in the backlog until its turn) is admitted once; the other entry is dropped.
  local heads, vals, dropped, seen = {}, {}, stale, {}
  for i, id in ipairs(ids) do
    local h = live[id] and not seen[id]
      and redis.call('HMGET', cfg.jp .. id, 'name', 'priority', 'opts')
    seen[id] = true
    if h and h[1] then
      heads[i] = h
    else
      vals[i] = false
      dropped[#dropped + 1] = id
    end
  end
  for n, p in ipairs(picks) do
    local i = at[n]
    if i and heads[i] then
      vals[i] = jobRecord(heads[i][1], p[1], TS and #LANES > 1 and LANE_INDEX[p[2].l] or nil)
    end
  end
  if TS then chargeTurns(picks, at, vals) end
  local leases, prios, admitted, records, missed, wasted = {}, {}, {}, {}, {}, 0
  local stepped, passBack = {}, {}
  -- With lanes, each lane's jobs admitted at priority 2 and not started yet, oldest first
  -- (:p2:<lane>, a list that may hold ids BullMQ has started since: skipped when met). A job
  -- admitted within its lane's share does not take priority 1 itself while an older job of its
  -- lane waits at 2: that job moves up to 1 and this one waits at 2 behind it, so a lane's jobs
  -- start in admission order and no early job waits at 2 while later ones of its lane overtake
  -- it at 1 (maxConsecutive holds in start order too). The job moved up takes a new place in
  -- BullMQ's counter, as an admission at 1 would: among the lanes' priority-1 jobs BullMQ serves
  -- the lowest counter first, and an old one would put its lane ahead of the others' shares.
  local p2Later, up, movedUp = {}, {}, {}
  for n, p in ipairs(picks) do
    if p[3] == 1 and at[n] and vals[at[n]] then up[p[2].l] = (up[p[2].l] or 0) + 1 end
  end
  -- Up to n of lane l's oldest jobs waiting at 2, to move up to 1 (moveIntoBull, with this
  -- call's admissions; popped from its list in pages; an id BullMQ started since is dropped).
  local pz = cfg.jp .. 'prioritized'
  for l, n in pairs(up) do
    local k, moved = base .. ':p2:' .. l, {}
    for _ = 1, 4 do
      if #moved >= n then break end
      local page = redis.call('LPOP', k, n - #moved)
      if not page then break end
      local scores = readMany('ZMSCORE', pz, page)
      for i, id in ipairs(page) do
        local sc = tonumber(scores[i])
        if sc and sc >= 8589934592 and sc < 12884901888 then moved[#moved + 1] = id end
      end
    end
    for _, id in ipairs(moved) do movedUp[#movedUp + 1] = id end
    up[l] = moved
  end
  -- Formatted once: a number argument costs a printf per element.
  local check = fmt(now + cfg.chk)
  for n, p in ipairs(picks) do
    local i = at[n]
    local v = i and vals[i]
    if v then
      local prio, l = p[3], p[2].l
      if prio == 1 then
        -- The next job moved up in its place, if any: it holds the lane's priority-1 slot.
        local moved = table.remove(up[l], 1)
        if moved then prio = 2 end
        lanesOf[#lanesOf + 1] = moved or ids[i]
        lanesOf[#lanesOf + 1] = l
      end
      if prio == 2 then
        local later = p2Later[l] or {}
        p2Later[l] = later
        later[#later + 1] = ids[i]
      end
      out[#out + 1] = ids[i]
      prios[#prios + 1] = prio
      admitted[#admitted + 1] = heads[i]
      records[#records + 1] = ids[i]
      records[#records + 1] = v
      leases[#leases + 1] = check
      leases[#leases + 1] = ids[i]
    else
      -- No longer held by BullMQ: it takes no slot, and its tenant, taken out of turn at its
      -- cap by this pick, is put back (see dispatch below).
      local r = tenants[p[1]]
      r.inf = r.inf - 1
      r.dirty = true
      missed[p[1]] = true
      wasted = wasted + 1
      if p[3] == 1 then p[2].p1 = p[2].p1 - 1 end
      -- A turn that went to nothing gives back its rate step and its pass (with share 'time',
      -- chargeTurns gave the pass back): else a tenant's removed jobs would use up its rate and
      -- its turns, one interval per pick.
      if p[4] then
        if r.rl then
          r.tat = r.tat - r.rl[1]
          stepped[p[1]] = true
        end
        if not TS then
          local back = passBack[p[2]] or {}
          passBack[p[2]] = back
          back[p[1]] = (back[p[1]] or 0) - 1
        end
      end
    end
  end
  if #dropped > 0 then forgetDropped(dropped, now) end
  if #records > 0 then variadic('HSET', kJobs, records) end
  if #leases > 0 then variadic('ZADD', kLeases, leases) end
  if #lanesOf > 0 then variadic('HSET', kLaneOf, lanesOf) end
  for l, later in pairs(p2Later) do
    -- Bounded: past 8,192 waiting at 2 in one lane, the oldest start in BullMQ's order.
    variadic('RPUSH', base .. ':p2:' .. l, later)
    redis.call('LTRIM', base .. ':p2:' .. l, -8192, -1)
  end
  moveIntoBull(out, prios, admitted, movedUp)
  for _, s in ipairs(lanes) do
    if s.used then
      if s.l == '' then
        redis.call('HSET', kState, 'vt', fmt(s.vt), 'last', s.last, 'streak', s.streak)
      else
        redis.call('HSET', kState, sf('vt', s.l), fmt(s.vt), sf('last', s.l), s.last,
                   sf('streak', s.l), s.streak, 'p1:' .. s.l, s.p1)
      end
      laneVt[s.l] = s.vt
    end
  end
  -- The given-back turns (a turn is 1 / weight, as time share's ms / weight: its movePasses also
  -- moves the ready-set score of a tenant still in turn), and the rate schedule of tenants given
  -- back a step (held back by their rate in this call: due sooner now, or not held at all).
  movePasses(passBack)
  for t in pairs(stepped) do
    local r = tenants[t]
    if r.tat - now > r.rl[2] then
      redis.call('ZADD', kLimited, 'XX', fmt(r.tat - r.rl[2]), t)
    else
      redis.call('ZREM', kLimited, t)
    end
  end
  for t in pairs(missed) do activate(t) end
  if cfg.dt then turnFlush() end
  -- Picks that went to nothing because ids were dropped: another pass may use those turns.
  if #dropped == 0 then wasted = 0 end
  return out, wasted
end

-- Dispatch, again while picks went to nothing for jobs BullMQ no longer holds (removed by a
-- client, past the ids a pass drops), up to a few passes per call (the tick goes on with the rest).
local function dispatch(maxN, now)
  local out, dropped = dispatchOnce(maxN, now)
  local passes = 1
  while dropped > 0 and #out < maxN and passes < 8 do
    local more
    more, dropped = dispatchOnce(maxN - #out, now)
    for _, id in ipairs(more) do out[#out + 1] = id end
    passes = passes + 1
  end
  return out
end
