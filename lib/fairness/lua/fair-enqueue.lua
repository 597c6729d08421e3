--- @include "fair-dispatch"
--- @include "fair-settle"
--- @include "fair-keys"
--- @include "../modes/budget/fair-budget"
--- @include "fair-tenants"
--- @include "../modes/fair-keys/fair-fairkey"
--- @include "fair-bull"
--- @include "fair-turns"
--[[
  Enqueue into the fair gate. Runs in the producer's MULTI right after BullMQ's own adds of the
  same jobs, each held in BullMQ's delayed set (fair-bull.lua): a job is written once, into
  BullMQ; the gate records its id and turn, then dispatches what the window allows (the fast
  path: a light tenant's job is admitted in the same call). A refused call (a backlog full)
  takes back what those adds wrote (unadd): all or nothing.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  per-tenant backlog limit (0 = none)
  ARGV[4]  directory/tier hints, flat JSON list [tenant, [weight, cap, rate, lanes], ...] ([] when none)
  ARGV[5]  the adds' timestamp (ms, one for the call)
  ARGV[6]  with cfg.dt (fair-turns.lua): one character a job, 'd' where the job may take its
           turn's priority at once (no own priority, not lifo), '.' where it may not; else ''
  ARGV[7..] triples: job id, tenant, lane ('' without lanes; "<lane>\n<fair key>" for a job
           with a fair key, cfg.fk)
  Returns {'full', tenant, backlog} with nothing kept, or {'ok', {admitted id, ...}, wake ms,
  with a budget: the queues it woke}.
]]
local now = nowMs()
local maxBacklog = tonumber(ARGV[3])
local stamp = ARGV[5]
local flags = ARGV[6]
local first = 7
local ids = {}
for i = first, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end
-- A job is new when BullMQ holds it at the hold score with this call's timestamp (the add just
-- before this script wrote it): a re-add of an id BullMQ has already (held, admitted or
-- finished) wrote nothing, and an id twice in one call is taken once. (Only the gate's own
-- records of admitted jobs are kept by id: a queued job costs its id in a backlog, no more.)
local scores = readMany('ZMSCORE', cfg.jp .. 'delayed', ids)
local new, seen, added = {}, {}, {}
for j, id in ipairs(ids) do
  if isHeld(scores[j]) and not seen[id] and redis.call('HGET', cfg.jp .. id, 'timestamp') == stamp then
    seen[id] = true
    new[#new + 1] = first + (j - 1) * 3
    added[#added + 1] = id
  end
end
if maxBacklog > 0 then
  local counts, list = {}, {}
  for _, i in ipairs(new) do
    local t = ARGV[i + 1]
    if not counts[t] then list[#list + 1] = t end
    counts[t] = (counts[t] or 0) + 1
  end
  loadTenants(list)
  for t, c in pairs(counts) do
    local length = backlog(tenant(t))
    if length + c > maxBacklog then
      unadd(added, #ids)
      return {'full', t, length}
    end
  end
end
local changed = applyHints(cjson.decode(ARGV[4]))
local groups, order = {}, {}
for _, i in ipairs(new) do
  local id, t, l = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local g = l .. '\n' .. t
  -- With fair keys l may be "<lane>\n<key>": a length prefix keeps (lane, key, tenant) apart.
  if cfg.fk then g = #l .. ':' .. g end
  local group = groups[g]
  if not group then
    group = { t, l, {} }
    groups[g] = group
    order[#order + 1] = group
  end
  group[3][#group[3] + 1] = id
  if cfg.dt then
    group[4] = group[4] or {}
    group[4][#group[3]] = string.byte(flags, (i - first) / 3 + 1) == 100
  end
end
-- Priority by turn (cfg.dt): a tenant no rule holds and with nothing in the gate skips it, its
-- jobs straight into BullMQ's prioritized set at their turns (fair-turns.lua); a tenant a rule
-- holds now (directory hints just changed) has what it had there recalled into the gate.
if cfg.dt then
  local list = {}
  for _, group in ipairs(order) do list[#list + 1] = group[1] end
  for _, t in ipairs(changed) do list[#list + 1] = t end
  loadTenants(list)
  for _, t in ipairs(changed) do
    if ruleHeld(tenants[t]) then recallTurns(t, now) end
  end
  local rest = {}
  for _, group in ipairs(order) do
    local t, r = group[1], tenants[group[1]]
    if ruleHeld(r) or len(r, '') > 0 then
      rest[#rest + 1] = group
    else
      local direct, held = {}, {}
      for j, id in ipairs(group[3]) do
        if group[4][j] and #held == 0 then direct[#direct + 1] = id else held[#held + 1] = id end
      end
      if #direct > 0 then moveByTurn(t, r, direct, now) end
      if #held > 0 then
        group[3] = held
        rest[#rest + 1] = group
      end
    end
  end
  order = rest
  turnFlush()
end
-- A tenant whose backlog was empty may need to be put in turn; one with a backlog already is in
-- turn, or held back by its cap, pause or rate limit (each of which puts it back itself).
local wake, lengths = {}, {}
-- With fair keys every backlog is a zset scored in its keys' turns (fair-fairkey.lua).
if cfg.fk then
  enqueueKeyed(order, wake, lengths)
  order = {}
end
for _, group in ipairs(order) do
  local t, l, list = group[1], group[2], group[3]
  local length = 0
  for i = 1, #list, CHUNK do
    length = redis.call('RPUSH', qKey(t, l), unpack(list, i, math.min(#list, i + CHUNK - 1)))
  end
  if tenants[t] then tenants[t].len[l], tenants[t].len0[l] = length, length end
  lengths[l] = lengths[l] or {}
  lengths[l][#lengths[l] + 1] = t
  lengths[l][#lengths[l] + 1] = length
  if length == #list then wake[t] = true end
end
for l, list in pairs(lengths) do variadic('HSET', bKey(l), list) end
for _, t in ipairs(changed) do wake[t] = true end
local woken = {}
for t in pairs(wake) do woken[#woken + 1] = t end
loadTenants(woken)
for _, t in ipairs(woken) do activate(t) end
local out = dispatch(tonumber(ARGV[2]), now)
flushTenants(now)
return {'ok', out, nextWake(now), budgetWoken()}
