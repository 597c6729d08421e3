--- @include "../../lua/fair-keys"
--- @include "../../lua/fair-tenants"
--[[
  Fair-gate part, mode fair keys (includes fair-tenants; dispatch, enqueue and the read-only
  scripts include it): turns inside a tenant, on a queue with cfg.fk ('job' or 'actor').
  A tenant is picked as always (its pass in the lane's ready set; keys never enter it). On such a
  queue a tenant's backlog in a lane is one zset of its job ids instead of a list, each scored at
  enqueue in its key's turn: start-time fair queuing across the tenant's keys with equal weights.
  A job of key k gets the turn max(tail of k, the tenant's key clock) + 1, where the tail is the
  turn of k's last queued job and the clock is the turn of the tenant's last job taken, so a key
  that wakes up starts right after what runs now (idleness earns no credit) and a flood of one key
  takes one turn in each round of the keys with work. Jobs without a key are one key ('').
  A take is then one ZPOPMIN, as cheap as the LPOP of a plain backlog; a job's place among the
  tenant's jobs is its ZRANK. Ties (one turn of several keys) go in enqueue order.
  Keys (l = lane, '' without lanes; the tenant's segment tkp()-escaped, a fair key only a field):
    :kz:<tkp(tenant)>[:<lane>]  zset id -> turn * 2^20 + enqueue order within the turn
    :kt:<tkp(tenant)>[:<lane>]  hash fair key -> turn of its last queued job (gone with the
                                tenant's last job in the lane)
    :kv[:<lane>]                hash tenant -> the turn of its last job taken (the key clock;
                                gate-wide, read with the tenant's state, dropped when it drains)
  :bl counts the zset as it counts a list; everything that reads a backlog's length is unchanged.
]]
local KTURN = 1048576

local function kzKey(t, l)
  if l == '' then return base .. ':kz:' .. tkp(t) end
  return base .. ':kz:' .. tkp(t) .. ':' .. l
end
local function ktKey(t, l)
  if l == '' then return base .. ':kt:' .. tkp(t) end
  return base .. ':kt:' .. tkp(t) .. ':' .. l
end

-- Enqueue's groups {tenant, "<lane>" or "<lane>\n<key>", ids}, all of them under keys: one
-- HMGET of the keys' tails, one variadic ZADD and one HSET per (tenant, lane). Sets each
-- tenant's new length in `lengths` (lane -> {tenant, length, ...}) and wakes a tenant whose
-- backlog in the lane was empty.
local function enqueueKeyed(groups, wake, lengths)
  local byTL, order, who = {}, {}, {}
  for _, group in ipairs(groups) do
    local t, lk, ids = group[1], group[2], group[3]
    local l, k = lk, ''
    local nl = string.find(lk, '\n', 1, true)
    if nl then l, k = string.sub(lk, 1, nl - 1), string.sub(lk, nl + 1) end
    local g = #l .. ':' .. l .. t
    local e = byTL[g]
    if not e then
      e = { t = t, l = l, keys = {}, seen = {}, jobs = {} }
      byTL[g] = e
      order[#order + 1] = e
      who[#who + 1] = t
    end
    if not e.seen[k] then
      e.seen[k] = true
      e.keys[#e.keys + 1] = k
    end
    for _, id in ipairs(ids) do
      e.jobs[#e.jobs + 1] = k
      e.jobs[#e.jobs + 1] = id
    end
  end
  -- The tenants' lengths and key clocks: one HMGET each per lane for all of them (a tenant this
  -- call loaded already is read from its copy).
  local lens, clocks = {}, {}
  for _, l in ipairs(LANES) do
    lens[l] = hmgetMany(bKey(l), who)
    clocks[l] = hmgetMany(kvKey(l), who)
  end
  local at = {}
  for i, t in ipairs(who) do at[t] = i end
  for _, e in ipairs(order) do
    local t, l, r = e.t, e.l, tenants[e.t]
    local tails = hmgetMany(ktKey(t, l), e.keys)
    local tail = {}
    for i, k in ipairs(e.keys) do tail[k] = tonumber(tails[i]) or 0 end
    local before, clock
    if r then
      before, clock = r.len[l], r.kv[l] or 0
    else
      before, clock = tonumber(lens[l][at[t]]) or 0, tonumber(clocks[l][at[t]]) or 0
    end
    local zargs = {}
    for i = 1, #e.jobs, 2 do
      local k = e.jobs[i]
      local turn = math.max(tail[k], clock) + 1
      tail[k] = turn
      zargs[#zargs + 1] = int(turn * KTURN + (before + #zargs / 2) % KTURN)
      zargs[#zargs + 1] = e.jobs[i + 1]
    end
    variadic('ZADD', kzKey(t, l), zargs)
    local targs = {}
    for _, k in ipairs(e.keys) do
      targs[#targs + 1] = k
      targs[#targs + 1] = int(tail[k])
    end
    variadic('HSET', ktKey(t, l), targs)
    local length = before + #zargs / 2
    if r then r.len[l], r.len0[l] = length, length end
    lengths[l] = lengths[l] or {}
    lengths[l][#lengths[l] + 1] = t
    lengths[l][#lengths[l] + 1] = length
    if before == 0 then wake[t] = true end
  end
end

-- Takes tenant t's next n jobs in lane l in its keys' turns; moves its key clock. The keys'
-- tails go with the tenant's last job in the lane. Returns the ids, in turn order.
local function takeKeyed(t, r, l, n)
  local rows = redis.call('ZPOPMIN', kzKey(t, l), n)
  local ids = {}
  for i = 1, #rows, 2 do ids[#ids + 1] = rows[i] end
  if #rows > 0 then
    r.kv[l] = math.floor(tonumber(rows[#rows]) / KTURN)
    r.dirty = true
  end
  if #ids < n or r.len[l] - #ids <= 0 then redis.call('DEL', ktKey(t, l)) end
  return ids
end

-- Read only: a tenant's backlog in lane l, the next n ids (fair keys or not).
local function backlogIds(t, l, n)
  if cfg.fk then return redis.call('ZRANGE', kzKey(t, l), 0, n - 1) end
  return redis.call('LRANGE', qKey(t, l), 0, n - 1)
end

-- Read only: the job's place in tenant t's backlog in lane l (0 = next), or nil.
local function backlogPosition(t, l, id)
  if cfg.fk then return redis.call('ZRANK', kzKey(t, l), id) end
  return redis.call('LPOS', qKey(t, l), id)
end

-- The length of tenant t's backlog list or zset in lane l, read from Redis.
local function backlogLength(t, l)
  if cfg.fk then return redis.call('ZCARD', kzKey(t, l)) end
  return redis.call('LLEN', qKey(t, l))
end
