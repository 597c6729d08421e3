--- @include "fair-dispatch"
--- @include "fair-settle"
--- @include "fair-keys"
--- @include "../modes/budget/fair-budget"
--- @include "fair-tenants"
--- @include "../modes/floors/fair-floor"
--- @include "fair-bull"
--[[
  Periodic upkeep, run by every process: consumer heartbeat and window, slots freed by what
  BullMQ holds (a plain BullMQ worker or a dead process never holds a slot), jobs another client
  set running counted against their tenant (adoptStrangers, fair-bull.lua), slow-lane
  recovery, dispatch.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  slow lane config (JSON, see fair-release.lua)
  ARGV[4]  BullMQ job key prefix ({<prefix>:<queue>}:<queue>:)
  ARGV[5]  how long a tenant's directory/tier hints outlive its last jobs (ms; '' = kept)
  ARGV[6]  consumer id of this process
  ARGV[7]  this process's worker concurrency (0 = no worker, -1 = leaving)
  ARGV[8]  consumer heartbeat ttl (ms)
  ARGV[9]  window per consumer slot (factor)
  Returns {{event, tenant, failures, ...} (event 'floors': floors were held to the bound beyond
           the window, failures = the floor tenants below their floor), {admitted id, ...}, ms until a rate-limited tenant wakes (-1 none),
           with a budget: the queues it woke}.
]]
local now = nowMs()
local slowCfg = cjson.decode(ARGV[3])
local jobPrefix = ARGV[4]
local kConsumers = base .. ':consumers'
local kConc = base .. ':conc'
local conc = tonumber(ARGV[7])
if conc > 0 then
  redis.call('ZADD', kConsumers, now + tonumber(ARGV[8]), ARGV[6])
  redis.call('HSET', kConc, ARGV[6], conc)
elseif conc < 0 then
  redis.call('ZREM', kConsumers, ARGV[6])
  redis.call('HDEL', kConc, ARGV[6])
end
local dead = redis.call('ZRANGEBYSCORE', kConsumers, '-inf', now, 'LIMIT', 0, 100)
for _, id in ipairs(dead) do
  redis.call('ZREM', kConsumers, id)
  redis.call('HDEL', kConc, id)
end
local total = 0
for _, v in ipairs(redis.call('HVALS', kConc)) do total = total + tonumber(v) end
local win = math.max(cfg.minWin, math.ceil(total * tonumber(ARGV[9])))
redis.call('HSET', kState, 'window', win, 'slots', total)

local touched, events, released, out = {}, {}, {}, {}

-- Slots are freed by what Redis knows: each admitted job is checked cfg.chk ms after its
-- admission, then every cfg.chk ms while BullMQ holds it (its lease score is the time of its next
-- check). A job that finished (cfg.chk ago at least, so this process's own release, sent before
-- BullMQ's moveToFinished, comes first) or that BullMQ no longer has frees its slot, whoever ran
-- it: a plain BullMQ worker, or a process that died before its release reached the gate.
local due = redis.call('ZRANGEBYSCORE', kLeases, '-inf', now, 'LIMIT', 0, 500)
local later = {}
local nextCheck = fmt(now + cfg.chk)
for _, id in ipairs(due) do
  local f = redis.call('HMGET', jobPrefix .. id, 'finishedOn', 'returnvalue', 'failedReason', 'timestamp',
    'delay')
  if not f[4] or tonumber(f[4]) + (tonumber(f[5]) or 0) == HOLD_TS then
    -- BullMQ ran it and removed it (or a client removed it): its slot is free. So is it when the
    -- id holds a job at the gate's hold (removed, then added again): not the job admitted.
    released[#released + 1] = id
    released[#released + 1] = 'c'
  elseif f[1] and tonumber(f[1]) <= now - cfg.chk then
    local outcome = 'f'
    if f[2] then
      outcome = 'c'
    elseif f[3] and string.sub(f[3], 1, 11) == '[cancelled:' then
      outcome = 'x'
    end
    released[#released + 1] = id
    released[#released + 1] = outcome
  else
    later[#later + 1] = nextCheck
    later[#later + 1] = id
  end
end
if #later > 0 then variadic('ZADD', kLeases, later, 'XX') end
adoptStrangers(now)
-- Priority by turn: the ledgers of tenants that added nothing lately lose the ids BullMQ took (a
-- drained tenant's ledger goes), 200 a tick.
if cfg.dt then
  for _, t in ipairs(redis.call('ZRANGEBYSCORE', kDl, '-inf', now - 2 * cfg.chk, 'LIMIT', 0, 200)) do
    if ledgerTrim(t) > 0 then redis.call('ZADD', kDl, now, t) end
  end
  -- A recall left unfinished (its caller gone, or a slow-lane change or an add's hints began it):
  -- one more part of the oldest a tick.
  for _, t in ipairs(redis.call('ZRANGE', base .. ':rc', 0, 0)) do
    if recallTurns(t, now) > 0 then activate(t) end
  end
end
releaseMany(released, now, slowCfg, touched, events)

-- Rate limits: a tenant's schedule (:tat) still holds for an interval after its last job, so a
-- tenant that drained keeps its field; once the schedule is an interval old it reads as absent
-- (dispatch starts it from now), and it goes: 100 fields sampled a tick. A budget's shared
-- schedule goes the same way, by the interval of the tenant's limit here (the queues of a budget
-- share one limit); one this queue knows no limit for is left to the others.
local function dropPastSchedules()
  local sample = redis.call('HRANDFIELD', kTat, 100, 'WITHVALUES')
  local past, gone = {}, {}
  for i = 1, #sample, 2 do
    if tonumber(sample[i + 1]) < now and not tenants[sample[i]] then past[#past + 1] = sample[i] end
  end
  if #past == 0 then return end
  loadTenants(past)
  for _, t in ipairs(past) do
    local r = tenants[t]
    local before = r.rl and now - r.rl[1] or (not BG and now)
    if before and r.tat < before then gone[#gone + 1] = t end
  end
  if #gone > 0 then variadic('HDEL', kTat, gone) end
end
dropPastSchedules()

-- Priority by turn: a tenant's last level (:lv) a step or more behind the level BullMQ serves now
-- reads as absent (its next job takes that level, turnLevels), so it goes: 200 fields sampled a
-- tick. Without this a queue that never ran dry kept a field for every tenant that ever added
-- (the hash goes whole only when nothing waits by turn, at the next call that reads the level).
local function dropPastLevels()
  local sample = redis.call('HRANDFIELD', kLv, 200, 'WITHVALUES')
  if #sample == 0 then return end
  local v = turnFloor()
  local behind, gone = {}, {}
  for i = 1, #sample, 2 do
    if tonumber(sample[i + 1]) + 1 / cfg.k <= v then behind[#behind + 1] = sample[i] end
  end
  if #behind == 0 or redis.call('EXISTS', kLv) == 0 then return end
  loadTenants(behind)
  for i = 1, #sample, 2 do
    local t = sample[i]
    local r = tenants[t]
    if r and tonumber(sample[i + 1]) + 1 / math.min(weightIn(r, ''), cfg.k) <= v then
      gone[#gone + 1] = t
    end
  end
  if #gone > 0 then variadic('HDEL', kLv, gone) end
end
if cfg.dt then dropPastLevels() end

-- Directory/tier hints (dw, dcap, drl, dlanes in a tenant's :t: hash, written with its jobs): a
-- tenant with nothing else there (no override, pause, slow lane or floor), nothing in flight or
-- waiting, a past rate schedule, and hints older than ARGV[5] (more than any process's
-- tierCacheMs, so the next enqueue sends them again) loses them: 100 :conf members sampled a
-- tick. Without this every tenant that ever ran with a tier or directory limit kept its hash and
-- its :conf member. (A budget's tenant keeps them while it has jobs in flight on any queue.)
local function dropIdleHints()
  local before = now - tonumber(ARGV[5])
  local idle, gone = {}, {}
  for _, t in ipairs(redis.call('SRANDMEMBER', kConf, 100)) do
    local h = redis.call('HGETALL', tKey(t))
    local only, at = not tenants[t], nil
    for i = 1, #h, 2 do
      if h[i] == 'dat' then
        at = tonumber(h[i + 1])
      elseif h[i] ~= 'dw' and h[i] ~= 'dcap' and h[i] ~= 'drl' and h[i] ~= 'dlanes' then
        only = false
      end
    end
    if only and at and at < before then idle[#idle + 1] = t end
  end
  if #idle == 0 then return end
  loadTenants(idle)
  for _, t in ipairs(idle) do
    local r = tenants[t]
    if r.inf == 0 and (not BG or r.binf == 0) and backlog(r) == 0
        and r.tat < now - (r.rl and r.rl[1] or 0)
        and not (cfg.dt and redis.call('EXISTS', dKey(t)) == 1) then
      gone[#gone + 1] = t
      redis.call('DEL', tKey(t))
      forget(t)
    end
  end
  if #gone > 0 then variadic('SREM', kConf, gone) end
end
if ARGV[5] ~= '' then dropIdleHints() end

if slowCfg.threshold > 0 then
  for _, t in ipairs(redis.call('SRANDMEMBER', kSlow, 100)) do checkRecovery(t, now, slowCfg, events) end
end
afterRelease({}, now, slowCfg, events)
for t in pairs(touched) do activate(t) end
if BG then budgetRecheck(loadTenants, activate) end
for _, v in ipairs(dispatch(tonumber(ARGV[2]), now)) do out[#out + 1] = v end
flushTenants(now)
floorsReport(events)
return {events, out, nextWake(now), budgetWoken()}
