--- @include "fair-keys"
--- @include "fair-tenants"
--- @include "fair-bull"
--[[
  Fair-gate part: turns as BullMQ priorities (cfg.dt, `priorityByTurn` on a queue without
  lanes, fair keys, time share, budget or backlog limit). A job whose tenant no rule holds (not
  paused, no cap, no rate limit, no floor, nothing in the gate) is not held at all: the enqueue
  call moves it from the hold into BullMQ's prioritized set at once, at its tenant's turn level,
  and BullMQ's own moveToActive serves the levels in order; the gate does no work for it again
  (no admission, no slot, no release). Jobs the gate does admit (a capped or rate-limited
  tenant's) take their level the same way, so both kinds share one order.
  Levels (stride scheduling on BullMQ's priority): a tenant's next job takes
  max(its last level + 1 / weight, V), V being the level BullMQ serves now (the head of the
  prioritized set; kept in :state `lv` so it never goes back); a tenant of weight 3 has three
  jobs a level and a tenant that wakes up starts at V (idleness earns no credit); while few jobs
  wait at V, a small tenant that wakes up (no more jobs than cfg.k or the workers' slots) has
  them all at V (its few jobs start at once). Weights above cfg.k count
  as cfg.k (at most k of one tenant a level, the `maxConsecutive` promise). The BullMQ priority
  is twice the level's floor for a job that skipped the gate and one more for a job the gate
  admitted: the worker's release stage knows by the parity that a job holds no slot
  (FairGate.holdsNoSlot), and within a level the jobs that skipped the gate go first. When the prioritized set is empty the levels start again
  at 1 (the :lv hash goes); BullMQ's priorities stop at 2^21 - 1, so a queue that never runs dry
  for about a million turns of its busiest tenant serves its newest turns in arrival order
  until it does.
  Keys: :lv hash tenant -> last level | :d:<tkp(tenant)> list of the ids it moved for the tenant
  (its ledger: what a pause or a cap recalls into the gate, what the gauges count; ids BullMQ
  has taken since are trimmed from its head) | :dl zset tenant -> last time its ledger grew |
  :rc zset tenant -> when its recall began, the tenants whose recall is not finished (a recall
  takes 1,000 ids a call, the newest first; the admin call's caller and the tick go on with it)
]]
local LMAX = 1048575
local TWO32 = 4294967296

-- The producer adds a job that may skip the gate (fair-gate-enqueue.ts) at this BullMQ priority,
-- above every level, in the same MULTI as the enqueue call, which gives it its level or takes
-- it into the hold: no worker ever sees it there.
local PLACEHOLDER = 2097151
local PLACE_MIN = PLACEHOLDER * TWO32
local function isPlaced(s) return s and tonumber(s) >= PLACE_MIN end

-- V, read once per call (see above); nil until read.
local levelNow = nil
local levelsOut = {}

local function turnFloor()
  if levelNow then return levelNow end
  local head = redis.call('ZRANGE', cfg.jp .. 'prioritized', 0, 0, 'WITHSCORES')
  local stored = tonumber(redis.call('HGET', kState, 'lv')) or 1
  -- Jobs at the placeholder (the highest scores) have no level yet.
  if #head == 0 or tonumber(head[2]) >= PLACE_MIN then
    if stored > 1 or redis.call('EXISTS', kLv) == 1 then
      redis.call('UNLINK', kLv)
      redis.call('HSET', kState, 'lv', 1)
    end
    levelNow = 1
  else
    levelNow = math.max(stored, math.floor(math.floor(tonumber(head[2]) / TWO32) / 2))
    if levelNow > stored then redis.call('HSET', kState, 'lv', levelNow) end
  end
  return levelNow
end

-- The workers' total concurrency (the tick keeps it in :state), read once per call.
local slotsNow = nil
local function turnSlots()
  if not slotsNow then slotsNow = tonumber(redis.call('HGET', kState, 'slots')) or 0 end
  return slotsNow
end

-- How many jobs wait at level V (BullMQ priorities 2V and 2V + 1), read once per call and counted
-- on as this call places jobs there.
local atV = nil
local function levelLoad()
  if not atV then
    local v = turnFloor()
    atV = redis.call('ZCOUNT', cfg.jp .. 'prioritized', string.format('%.0f', 2 * v * TWO32),
                     '(' .. string.format('%.0f', (2 * v + 2) * TWO32))
  end
  return atV
end

-- The BullMQ priorities of tenant t's next n jobs (weight w; odd: admitted by the gate), its
-- last level written at the end (turnFlush). Levels of a tenant read in this call are kept in
-- levelsOut.
local function turnLevels(t, w, n, odd)
  local last = levelsOut[t]
  if last == nil then last = tonumber(redis.call('HGET', kLv, t)) or false end
  local v = turnFloor()
  if w > cfg.k then w = cfg.k end
  local step = 1 / w
  local l
  -- A small tenant that wakes up (nothing of it at or after V, no more jobs than maxConsecutive
  -- or the workers' slots; below weight 1, the slow lane, a share of maxConsecutive) while few
  -- jobs wait at V (fewer than the workers' slots, at least cfg.k: a few busy tenants, not many
  -- waking ones) runs all its jobs at V: they start at once instead of one a level behind a
  -- flood. A flood that wakes up takes one level a turn from the start.
  local burst = 1
  if not last or last + step <= v then
    l = v
    local small = math.floor(cfg.k * math.min(w, 1))
    if w >= 1 then small = math.max(small, turnSlots()) end
    if n > 1 and n <= small and levelLoad() < math.max(cfg.k, turnSlots()) then burst = n end
  else
    l = last + step
  end
  local out = {}
  for i = 1, n do
    -- The burst is the tenant's share of level V: what follows starts at the next level.
    if i == burst + 1 and burst > 1 then l = v + 1 - step end
    if i > burst then l = l + step end
    local level = math.max(1, math.min(math.floor(l + 1e-9), LMAX))
    if atV and level == v then atV = atV + 1 end
    out[i] = 2 * level + (odd and 1 or 0)
  end
  levelsOut[t] = l
  return out
end

local function turnFlush()
  local set = {}
  for t, l in pairs(levelsOut) do
    set[#set + 1] = t
    set[#set + 1] = fmt(l)
  end
  if #set > 0 then variadic('HSET', kLv, set) end
end

-- Drops from the head of t's ledger the ids BullMQ no longer holds in its prioritized set (it
-- serves a tenant's jobs in ledger order, so those are a prefix); returns what is left. It reads
-- 32 ids first (a check finds a few levels' worth gone, or none), then 256 at a time.
local function ledgerTrim(t)
  local k = dKey(t)
  local size = 32
  while true do
    local ids = redis.call('LRANGE', k, 0, size - 1)
    if #ids == 0 then
      redis.call('ZREM', kDl, t)
      return 0
    end
    local at = readMany('ZMSCORE', cfg.jp .. 'prioritized', ids)
    local gone = 0
    while gone < #ids and not at[gone + 1] do gone = gone + 1 end
    if gone == 0 then return redis.call('LLEN', k) end
    if gone == #ids and #ids < size then
      redis.call('DEL', k)
      redis.call('ZREM', kDl, t)
      return 0
    end
    redis.call('LTRIM', k, gone, -1)
    if gone < #ids then return redis.call('LLEN', k) end
    size = 256
  end
end

-- A job's stored options without the placeholder priority.
local function unplaced(opts)
  local o, n = string.gsub(opts, ',"priority":2097151', '', 1)
  if n == 0 then o = string.gsub(opts, '"priority":2097151,?', '', 1) end
  return o
end

-- Notes ids in tenant t's ledger, trimmed as it grows past each power of two from 64 (amortized
-- O(1) a job).
local function ledgerPush(t, ids, now)
  local n = variadic('RPUSH', dKey(t), ids) or 0
  if n >= 64 and n - #ids < 2 ^ math.floor(math.log(n) / math.log(2)) then ledgerTrim(t) end
  redis.call('ZADD', kDl, now, t)
end

-- Gives jobs `ids` of tenant t (r its record), just added at the placeholder (scores: their
-- BullMQ scores), their turn levels in BullMQ's prioritized set, and notes them in its ledger.
local function placeByTurn(t, r, ids, scores, now)
  local prios = turnLevels(t, weightIn(r, ''), #ids)
  local jp, args = cfg.jp, {}
  for i, id in ipairs(ids) do
    local jk = jp .. id
    -- BullMQ's score: priority * 2^32 + its counter (kept).
    args[#args + 1] = string.format('%.0f', prios[i] * TWO32 + tonumber(scores[i]) % TWO32)
    args[#args + 1] = id
    redis.call('HSET', jk, 'priority', prios[i], 'opts', unplaced(redis.call('HGET', jk, 'opts') or '{}'))
  end
  variadic('ZADD', jp .. 'prioritized', args, 'XX')
  ledgerPush(t, ids, now)
end

-- Notes job `id` held: its hold score and id appended to `held` (a ZADD list for BullMQ's
-- delayed set) and a `delayed` event, trimmed at maxEvents when given (as BullMQ's add trims).
local function holdEntry(held, id, events, maxEvents)
  held[#held + 1] = string.format('%.0f', HOLD_MIN + (#held / 2) % 4096)
  held[#held + 1] = id
  if maxEvents then
    redis.call('XADD', events, 'MAXLEN', '~', maxEvents, '*', 'event', 'delayed', 'jobId', id,
               'delay', int(HOLD_TS))
  else
    redis.call('XADD', events, '*', 'event', 'delayed', 'jobId', id, 'delay', int(HOLD_TS))
  end
end

-- Takes jobs `ids` from BullMQ's prioritized set into the hold (BullMQ's delayed set at the hold
-- score, a `delayed` event), as the producer's held add would have written them.
local function toHold(ids, now)
  local jp = cfg.jp
  variadic('ZREM', jp .. 'prioritized', ids)
  local held, events = {}, jp .. 'events'
  for _, id in ipairs(ids) do
    local jk = jp .. id
    local h = redis.call('HMGET', jk, 'timestamp', 'opts')
    local delay = int(HOLD_TS - (tonumber(h[1]) or now))
    local opts = withOption(unplaced(h[2] or '{}'), 'delay', tonumber(delay), true)
    redis.call('HSET', jk, 'delay', delay, 'priority', 0, 'opts', opts)
    holdEntry(held, id, events)
  end
  variadic('ZADD', jp .. 'delayed', held)
end

-- Puts held jobs `ids` of tenant t (r its record) at the tail of its backlog; returns 1 when
-- the backlog was empty (the tenant is put in turn: the gate should dispatch now), else 0.
local function toBacklog(t, r, ids)
  local length = variadic('RPUSH', qKey(t, ''), ids)
  r.len[''] = length
  if length > #ids then return 0 end
  activate(t)
  return 1
end

-- Whether a rule holds tenant r's jobs in the gate (paused, capped, rate-limited, a floor).
local function ruleHeld(r)
  return r.paused or r.cap > 0 or r.rl ~= nil or r.min > 0
end

-- Takes back into the gate what t's ledger holds still queued in BullMQ's prioritized set (its
-- tenant is paused or got a cap, a rate limit or a floor): each goes back to the hold (a
-- `delayed` event) and to the head of its backlog, in its order. At most 1,000 ids a call, the
-- ledger's newest first (what is left of it stays ahead of them in BullMQ), the tenant in :rc
-- until its ledger is done: one call over a tenant's 100,000 turns ran past Redis' 5 s script
-- limit (every client answered BUSY). Returns how many.
local function recallTurns(t, now)
  local k, kRc = dKey(t), base .. ':rc'
  -- The first call of a recall sets the level from the ledger's first id BullMQ still holds (the
  -- parts that follow leave it): the jobs the gate admits meanwhile take the turns they had.
  local going, first = redis.call('ZSCORE', kRc, t), nil
  if not going then
    local n, lo = ledgerLive(t)
    if lo < n then
      first = tonumber(redis.call('ZSCORE', cfg.jp .. 'prioritized', redis.call('LINDEX', k, lo)))
    end
  end
  local ids = redis.call('LRANGE', k, -1000, -1)
  if redis.call('LLEN', k) > #ids then
    redis.call('LTRIM', k, 0, -#ids - 1)
    if not going then redis.call('ZADD', kRc, now, t) end
  else
    redis.call('DEL', k)
    redis.call('ZREM', kDl, t)
    redis.call('ZREM', kRc, t)
  end
  if #ids == 0 then return 0 end
  local at = readMany('ZMSCORE', cfg.jp .. 'prioritized', ids)
  local back = {}
  for i, id in ipairs(ids) do
    if at[i] then
      back[#back + 1] = id
      local score = tonumber(at[i])
      if not going and (not first or score < first) then first = score end
    end
  end
  if #back == 0 then return 0 end
  toHold(back, now)
  local q = qKey(t, '')
  for i = #back, 1, -CHUNK do
    local part = {}
    for j = i, math.max(1, i - CHUNK + 1), -1 do part[#part + 1] = back[j] end
    redis.call('LPUSH', q, unpack(part))
  end
  local r = tenant(t)
  -- Its last level goes back to just before the first job recalled: the gate admits them at the
  -- turns they had, not behind the levels they leave (behind every other tenant's queued jobs).
  if first then
    local w = math.min(weightIn(r, ''), cfg.k)
    local last = math.floor(math.floor(first / TWO32) / 2) - 1 / w
    levelsOut[t] = last
    redis.call('HSET', kLv, t, fmt(last))
  end
  r.len[''] = r.len[''] + #back
  redis.call('HSET', bKey(''), t, r.len[''])
  return #back
end
