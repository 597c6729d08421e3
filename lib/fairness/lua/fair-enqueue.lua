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
  ARGV[6]  with cfg.dt (fair-turns.lua): one character a job, 'd' where the producer added it
           at the placeholder priority (it may take its turn at once: no own priority, not
           lifo), '.' where it added it held; else ''
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
-- With cfg.dt a job flagged 'd' was added at the placeholder priority instead (fair-turns.lua):
-- new when BullMQ holds it there.
local scores = readMany('ZMSCORE', cfg.jp .. 'delayed', ids)
local placed = cfg.dt and string.find(flags, 'd', 1, true) and readMany('ZMSCORE', cfg.jp .. 'prioritized', ids)
local new, seen, added = {}, {}, {}
for j, id in ipairs(ids) do
  local fresh
  if placed and string.byte(flags, j) == 100 then
    fresh = isPlaced(placed[j])
  else
    fresh = isHeld(scores[j]) and redis.call('HGET', cfg.jp .. id, 'timestamp') == stamp
  end
  if fresh and not seen[id] then
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
-- An id the gate still counts as admitted (its record) that BullMQ took a new job under: the
-- admitted job was removed, then the id added again. Its slot is freed now, as the check would
-- free a vanished job's, so the new job is never counted on top of it and a capped tenant is
-- not held by a job that no longer exists.
if #added > 0 then
  local phantoms, records = {}, hmgetMany(kJobs, added)
  for j = 1, #added do
    if records[j] then
      phantoms[#phantoms + 1] = added[j]
      phantoms[#phantoms + 1] = 'c'
    end
  end
  if #phantoms > 0 then
    local touched, noSlow = {}, { threshold = 0 }
    releaseMany(phantoms, now, noSlow, touched, {})
    afterRelease(touched, now, noSlow, {})
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
  if placed then
    -- The job's BullMQ score where it was added at the placeholder, else false.
    local j = (i - first) / 3 + 1
    group[4] = group[4] or {}
    group[4][#group[3]] = string.byte(flags, j) == 100 and placed[j]
  end
end
-- Priority by turn (cfg.dt): a tenant no rule holds and with nothing in the gate skips it, its
-- jobs given their turns in BullMQ's prioritized set (fair-turns.lua); the other tenants' jobs
-- added at the placeholder go into the hold, then their backlogs, as held adds; a tenant a rule
-- holds now (directory hints just changed) has what it had there recalled into the gate.
if cfg.dt then
  local list = {}
  for _, group in ipairs(order) do list[#list + 1] = group[1] end
  for _, t in ipairs(changed) do list[#list + 1] = t end
  loadTenants(list)
  for _, t in ipairs(changed) do
    if ruleHeld(tenants[t]) then recallTurns(t, now) end
  end
  local rest, hold = {}, {}
  for _, group in ipairs(order) do
    local t, r, marks = group[1], tenants[group[1]], group[4] or {}
    local free = not ruleHeld(r) and len(r, '') == 0
    local direct, scores, held = {}, {}, {}
    for j, id in ipairs(group[3]) do
      if free and marks[j] and #held == 0 then
        direct[#direct + 1] = id
        scores[#scores + 1] = marks[j]
      else
        held[#held + 1] = id
        if marks[j] then hold[#hold + 1] = id end
      end
    end
    if #direct > 0 then placeByTurn(t, r, direct, scores, now) end
    if #held > 0 then
      group[3] = held
      rest[#rest + 1] = group
    end
  end
  if #hold > 0 then toHold(hold, now) end
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
  local length = variadic('RPUSH', qKey(t, l), list)
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
-- Priority by turn: a call whose jobs all took their turns at once put nothing in the gate and
-- woke no tenant there: no dispatch (the releases and the tick admit what waits).
local out = {}
if not cfg.dt or #order > 0 or #woken > 0 then out = dispatch(tonumber(ARGV[2]), now) end
flushTenants(now)
return {'ok', out, nextWake(now), budgetWoken()}
