--- @include "fair-keys"
--- @include "fair-tenants"
--[[
  Fair-gate part: BullMQ's side of the gate. A gated job is a BullMQ job from add() on, held
  in BullMQ's own `delayed` zset at the hold score (below): no promotion of BullMQ's reaches it
  before 2039, so no worker takes it, while Job.fromId, getState ('delayed'), getJobCounts,
  waitUntilFinished and bull-board see it as it is. The gate keeps its id and turn only.
  Admission moves ids from there into BullMQ's wait list or prioritized set as BullMQ's own
  promote does (promote-9.lua, the same on bullmq 5 and 6): `delay` 0, a `waiting` event, the
  marker that wakes the workers.
  cfg.jp  BullMQ's key prefix of the queue, "<prefix>:<queue>:" (one slot with the gate's keys)
  cfg.pl  true on bullmq 5: a paused queue's jobs go to its `paused` list (6 keeps them in `wait`)
  cfg.pr  true when the gate gives admitted jobs BullMQ priorities (lanes, priority by turn)
]]
-- The producer adds a gated job with delay = HOLD_TS - timestamp, so BullMQ scores it
-- (timestamp + delay) * 0x1000 + counter = HOLD_TS * 0x1000 + counter: at least HOLD_MIN and at
-- most 2^53 - 1, exact in a double. HOLD_TS is 2^41 - 1 ms (2039-09-07).
local HOLD_TS = 2199023255551
local HOLD_MIN = 9007199254736896

-- Whether BullMQ's delayed score `s` (a ZSCORE/ZMSCORE reply, false when absent) holds a job
-- for the gate.
local function isHeld(s)
  return s and tonumber(s) >= HOLD_MIN
end

-- A job's gate record: '{"n":<name>}' then a newline and its tenant (see jobTenant, jobName);
-- with li, '{"n":<name>,"l":<li>}': the index of the lane it was admitted in (share 'time' with
-- lanes: its run time goes back to that lane, see releaseTimes).
local function jobRecord(name, t, li)
  if li then return '{"n":' .. cjson.encode(name) .. ',"l":' .. li .. '}\n' .. t end
  return '{"n":' .. cjson.encode(name) .. '}\n' .. t
end

-- Whether BullMQ's queue is paused, and else whether it is at its global concurrency (its
-- isQueuePausedOrMaxed, the same on bullmq 5 and 6): no marker then wakes a worker.
local function bullPausedOrMaxed()
  local meta = redis.call('HMGET', cfg.jp .. 'meta', 'paused', 'concurrency')
  if meta[1] ~= false then return true, false end
  if not meta[2] then return false, false end
  return false, redis.call('LLEN', cfg.jp .. 'active') >= tonumber(meta[2])
end

-- Moves admitted jobs, in admission order, from BullMQ's delayed set to where a worker takes
-- them. heads[i]: the job's name, own priority and stored options (HMGET, see dispatch).
-- prios[i]: the gate's priority for ids[i] (see dispatch): > 0 a BullMQ priority (with lanes it
-- wins over the job's own; by turn only where the job has none and is not lifo), -1 the top (a
-- floor tenant's job: ahead of every other), -2 the head of the wait list (a tenant below its
-- share of the slots), 0 the job's own priority or lifo. Each job's stored options say what it
-- runs with (`delay` 0; `lifo` for the top of an unprioritized queue, which is how the worker
-- knows it, see FairGate.isTop). up: jobs already in the prioritized set that move up to
-- priority 1 (lanes, see dispatch), each with a new place in the counter ahead of this call's.
local function moveIntoBull(ids, prios, heads, up)
  if #ids == 0 then return end
  local jp = cfg.jp
  local paused, maxed = bullPausedOrMaxed()
  local target = jp .. 'wait'
  if paused and cfg.pl then target = jp .. 'paused' end
  variadic('ZREM', jp .. 'delayed', ids)
  local fifo, front, ranked, ranks = {}, {}, {}, {}
  for i, id in ipairs(up or {}) do
    ranked[i] = id
    ranks[i] = 1
    redis.call('HSET', jp .. id, 'priority', 1)
  end
  local events = jp .. 'events'
  for i, id in ipairs(ids) do
    local jk = jp .. id
    local h = heads[i]
    local own = tonumber(h[2]) or 0
    local opts = withOption(h[3] or '{}', 'delay', 0, false)
    local lifo = string.find(opts, '"lifo":true', 1, true) ~= nil
    local p, bp = prios[i], own
    local ahead = false
    if p > 0 and (#LANES > 1 or not (own > 0 or lifo)) then
      bp = p
    elseif p == -2 then
      -- At the head of the wait list (its tenant is below its share of the slots), unless the
      -- job asked for its own priority or lifo.
      ahead = not (own > 0 or lifo)
    elseif p < 0 then
      -- A floor tenant's job: at the head of the wait list (lifo where the queue has no
      -- priorities, which tells the worker; else priority 0 at the head, ahead of the FIFO jobs).
      bp = 0
      if cfg.pr then
        ahead = true
      elseif not lifo then
        lifo = true
        if opts == '{}' then opts = '{"lifo":true}' else opts = '{"lifo":true,' .. string.sub(opts, 2) end
      end
    end
    if bp > 0 then
      ranked[#ranked + 1] = id
      ranks[#ranks + 1] = bp
    elseif lifo or ahead then
      front[#front + 1] = id
    else
      fifo[#fifo + 1] = id
    end
    redis.call('HSET', jk, 'delay', 0, 'priority', bp, 'opts', opts)
    redis.call('XADD', events, '*', 'event', 'waiting', 'jobId', id, 'prev', 'delayed')
  end
  -- BullMQ takes its wait list from the tail: FIFO jobs go in at the head, in admission order;
  -- lifo (and top) jobs at the tail, the first admitted last so it is taken first.
  if #fifo > 0 then variadic('LPUSH', target, fifo) end
  if #front > 0 then
    local reversed = {}
    for i = #front, 1, -1 do reversed[#reversed + 1] = front[i] end
    variadic('RPUSH', target, reversed)
  end
  if #ranked > 0 then
    -- BullMQ's priority score: priority * 2^32 + its priority counter (getPriorityScore).
    local last = redis.call('INCRBY', jp .. 'pc', #ranked)
    local args = {}
    for i, id in ipairs(ranked) do
      local counter = (last - #ranked + i) % 4294967296
      args[#args + 1] = string.format('%.0f', ranks[i] * 4294967296 + counter)
      args[#args + 1] = id
    end
    variadic('ZADD', jp .. 'prioritized', args)
  end
  if not (paused or maxed) then redis.call('ZADD', jp .. 'marker', 0, '0') end
end

-- Why a job queued in the gate by a version before 2.0 (its data in the gate, not in BullMQ)
-- ends failed at its turn: BullMQ never had it; the failed job carries its data, so a retry
-- (bull-board, DeadLetters) runs it.
local LEGACY = 'this job waited in the fair gate of a version that kept jobs outside BullMQ; ' ..
  'it was not run: retry it'

-- Jobs the gate met no longer held by BullMQ (see dispatch): a record an older version kept of
-- a queued job (the whole job) goes, and the job ends as a failed BullMQ job with its data
-- (LEGACY); a record of a job the tick counted as running already (adoptStrangers) stays with
-- its lease until the job ends.
local function forgetDropped(ids, now)
  local leased = readMany('ZMSCORE', kLeases, ids)
  local vals = hmgetMany(kJobs, ids)
  local gone = {}
  for i, id in ipairs(ids) do
    if not leased[i] then
      gone[#gone + 1] = id
      local json = vals[i] and jobJson(vals[i])
      if json and string.find(json, '"d":', 1, true) and redis.call('EXISTS', cfg.jp .. id) == 0 then
        local ok, job = pcall(cjson.decode, json)
        if ok and type(job) == 'table' then
          failInBull(id, LEGACY, tostring(job.n or ''), cjson.encode(job.d or {}),
                     cjson.encode(job.o or {}), now)
        end
      end
    end
  end
  if #gone > 0 then variadic('HDEL', kJobs, gone) end
end

-- Jobs running in BullMQ that the gate did not admit (retried from bull-board or with
-- job.retry(), promoted, added by a plain BullMQ client): each one seen running at two ticks
-- cfg.chk apart is counted against its tenant (read from its envelope; the system bucket without
-- one) until it ends, so the caps hold for what runs. (A job seen once may be one this gate
-- admitted and released an instant before BullMQ moved it to finished.)
local function adoptStrangers(now)
  local kSeen = base .. ':seen'
  local active = redis.call('LRANGE', cfg.jp .. 'active', 0, 999)
  redis.call('ZREMRANGEBYSCORE', kSeen, '-inf', now - 10 * cfg.chk)
  if #active == 0 then return end
  local leased = readMany('ZMSCORE', kLeases, active)
  local strangers = {}
  for i, id in ipairs(active) do
    if not leased[i] then strangers[#strangers + 1] = id end
  end
  if #strangers == 0 then return end
  local seen = readMany('ZMSCORE', kSeen, strangers)
  local mark, adopt = {}, {}
  for i, id in ipairs(strangers) do
    if not seen[i] then
      mark[#mark + 1] = fmt(now)
      mark[#mark + 1] = id
    elseif tonumber(seen[i]) <= now - cfg.chk then
      adopt[#adopt + 1] = id
    end
  end
  if #mark > 0 then variadic('ZADD', kSeen, mark) end
  if #adopt == 0 then return end
  variadic('ZREM', kSeen, adopt)
  local records, leases, owners = {}, {}, {}
  local check = fmt(now + cfg.chk)
  for _, id in ipairs(adopt) do
    local h = redis.call('HMGET', cfg.jp .. id, 'name', 'data')
    local t = envelopeTenant(h[2])
    records[#records + 1] = id
    records[#records + 1] = jobRecord(h[1] or '', t)
    leases[#leases + 1] = check
    leases[#leases + 1] = id
    owners[#owners + 1] = t
  end
  variadic('HSET', kJobs, records)
  variadic('ZADD', kLeases, leases)
  loadTenants(owners)
  for _, t in ipairs(owners) do
    local r = tenants[t]
    r.inf = r.inf + 1
    r.dirty = true
  end
end

-- Takes back what this call's BullMQ adds wrote for `ids` (the gate refused the call, see
-- fair-enqueue.lua): the jobs, their places in the delayed set, and their `added` and `delayed`
-- events, the last entries of the stream (nothing ran between them and this script: one MULTI).
local function unadd(ids, nAdds)
  if #ids == 0 then return end
  local jp = cfg.jp
  local keys, mine = {}, {}
  for _, id in ipairs(ids) do
    keys[#keys + 1] = jp .. id
    mine[id] = true
  end
  for i = 1, #keys, CHUNK do redis.call('DEL', unpack(keys, i, math.min(#keys, i + CHUNK - 1))) end
  variadic('ZREM', jp .. 'delayed', ids)
  local recent = redis.call('XREVRANGE', jp .. 'events', '+', '-', 'COUNT', 2 * nAdds + 2)
  local drop = {}
  for _, entry in ipairs(recent) do
    local f = entry[2]
    local event, job = nil, nil
    for i = 1, #f, 2 do
      if f[i] == 'event' then event = f[i + 1] elseif f[i] == 'jobId' then job = f[i + 1] end
    end
    if job and mine[job] and (event == 'added' or event == 'delayed') then drop[#drop + 1] = entry[1] end
  end
  if #drop > 0 then variadic('XDEL', jp .. 'events', drop) end
end
