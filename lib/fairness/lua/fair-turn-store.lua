--- @include "fair-turns"
--- @include "../modes/floors/fair-floor"
--[[
  The enqueue call of a queue that takes turns at add (cfg.dt), for a batch whose every job may
  take its turn (no own priority, lifo or delay), with only the options BullMQ's plain add
  stores (no parent, deduplication or repeat) and no directory hints to write: BullMQ's own add
  of each job and the lean call (fair-turn-add.lua) in one script call, so each job is written
  once and at its place: no placeholder priority to take back, no script call a job.
  Each new job is stored as BullMQ's add stores it (bullmq 5 and 6 alike, their
  addPrioritizedJob-9.lua and storeJob.lua: the `id` counter, the job hash, an `added` event; a
  known id writes nothing and gives a `duplicated` event):
  - a tenant no rule holds and with nothing in the gate: its jobs take their turn levels as
    BullMQ priorities (the `pc` counter, the prioritized set, the marker unless the queue is
    paused or at its global concurrency, a `waiting` event), and go into its ledger;
  - another tenant's jobs are stored held (BullMQ's delayed set at the hold score, a `delayed`
    event, as toHold leaves them) and go to the tail of its backlog; a backlog that was empty
    puts its tenant in turn (activate) and the reply asks the producer to kick the gate.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2..] sextuples: job id, tenant, name, data (JSON), stored options (JSON, BullMQ's short
           keys), timestamp (ms)
  Returns {'ok', 1 when the gate should dispatch now else 0}.
]]
local now = nowMs()
local jp = cfg.jp
local meta, events = jp .. 'meta', jp .. 'events'
local maxEvents = redis.call('HGET', meta, 'opts.maxLenEvents')
if not maxEvents then
  maxEvents = 10000
  redis.call('HSET', meta, 'opts.maxLenEvents', maxEvents)
end
-- BullMQ counts every add in its `id` key, custom ids included.
redis.call('INCRBY', jp .. 'id', (#ARGV - 1) / 6)
-- A new job's hash (6 fields, a value above 64 bytes: a hash table) ends its HMSET halfway
-- through growing from 4 buckets to 8, each later command on it moving one more: two lookups
-- finish it, 32 bytes less a queued job (BullMQ's own add leaves them until its job is touched).
local function settle(jk) redis.call('HMGET', jk, 'name', 'delay') end
local groups, order, seen = {}, {}, {}
for a = 2, #ARGV, 6 do
  local id = ARGV[a]
  if seen[id] or redis.call('EXISTS', jp .. id) == 1 then
    redis.call('XADD', events, 'MAXLEN', '~', maxEvents, '*', 'event', 'duplicated', 'jobId', id)
  else
    seen[id] = true
    local t = ARGV[a + 1]
    local group = groups[t]
    if not group then
      group = {}
      groups[t] = group
      order[#order + 1] = t
    end
    group[#group + 1] = a
  end
end
if #order == 0 then return {'ok', 0} end
loadTenants(order)
local placed, count = {}, 0
for _, t in ipairs(order) do
  local r = tenants[t]
  if not ruleHeld(r) and len(r, '') == 0 then
    placed[t] = true
    count = count + #groups[t]
  end
end
-- BullMQ's score of a prioritized job: priority * 2^32 + the `pc` counter, one INCR a job.
local counter = 0
if count > 0 then counter = redis.call('INCRBY', jp .. 'pc', count) - count end
local hold = {}
local kick, held = 0, false
for _, t in ipairs(order) do
  local r, group = tenants[t], groups[t]
  local ids = {}
  for i, a in ipairs(group) do ids[i] = ARGV[a] end
  if placed[t] then
    local prios = turnLevels(t, weightIn(r, ''), #group)
    local ranked = {}
    for i, a in ipairs(group) do
      local id, name = ARGV[a], ARGV[a + 2]
      counter = counter + 1
      redis.call('HMSET', jp .. id, 'name', name, 'data', ARGV[a + 3], 'opts', ARGV[a + 4],
                 'timestamp', ARGV[a + 5], 'delay', 0, 'priority', prios[i])
      settle(jp .. id)
      redis.call('XADD', events, '*', 'event', 'added', 'jobId', id, 'name', name)
      ranked[#ranked + 1] = string.format('%.0f', prios[i] * TWO32 + counter % TWO32)
      ranked[#ranked + 1] = id
      redis.call('XADD', events, 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', id)
    end
    -- In the set before the ledger grows: a ledger trim drops the ids it does not find there.
    variadic('ZADD', jp .. 'prioritized', ranked)
    ledgerPush(t, ids, now)
  else
    for _, a in ipairs(group) do
      local id, name = ARGV[a], ARGV[a + 2]
      local delay = int(HOLD_TS - tonumber(ARGV[a + 5]))
      local opts = withOption(ARGV[a + 4], 'delay', tonumber(delay), true)
      redis.call('HMSET', jp .. id, 'name', name, 'data', ARGV[a + 3], 'opts', opts,
                 'timestamp', ARGV[a + 5], 'delay', delay, 'priority', 0)
      settle(jp .. id)
      redis.call('XADD', events, '*', 'event', 'added', 'jobId', id, 'name', name)
      holdEntry(hold, id, events, maxEvents)
    end
    if toBacklog(t, r, ids) == 1 then kick = 1 end
    held = true
  end
end
if count > 0 then
  local paused, maxed = bullPausedOrMaxed()
  if not (paused or maxed) then redis.call('ZADD', jp .. 'marker', 0, '0') end
end
if #hold > 0 then variadic('ZADD', jp .. 'delayed', hold) end
turnFlush()
if held then flushTenants(now) end
return {'ok', kick}
