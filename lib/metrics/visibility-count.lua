--[[
  Counts one queue's jobs per tenant from BullMQ's own lists, on demand (the inspector's
  backlog and in-flight figures): no per-job record of ours is involved.
  KEYS[1]  prefix of the queue's BullMQ keys, `<bullPrefix>:<queue>:` (one hash slot)
  ARGV[1]  most jobs to read (over every list; the oldest end of each list first)
  ARGV[2]  '1' when a fair gate counts the jobs waiting their turn in the prioritized set (even
           priorities, priority by turn): they are not counted as waiting here (their oldest
           still is)
  Returns {complete (1 when every job was read), then per tenant: tenant, waiting (wait,
  paused, prioritized), delayed (not started yet; not the jobs a fair gate holds there, which
  the gate counts), running (active), retrying (delayed after a
  failed attempt), oldest due time of a waiting job (ms, -1 = none), oldest enqueuedAt among
  waiting jobs without a delay ('' = none)}. The tenant is read from the job's `_tenant`
  envelope ('-' when it has none).
]]
local p = KEYS[1]
local budget = tonumber(ARGV[1])
local byTurn = ARGV[2] == '1'
local complete = 1
local stats, order = {}, {}

local function stat(t)
  local s = stats[t]
  if not s then
    s = {0, 0, 0, 0, -1, ''}
    stats[t] = s
    order[#order + 1] = t
  end
  return s
end

local function read(id)
  local r = redis.call('HMGET', p .. id, 'data', 'timestamp', 'delay', 'atm', 'priority')
  local data, t, iso = r[1], '-', ''
  if data then
    -- The envelope is written last; a payload's own nested `_tenant` comes before it.
    local at, from = nil, 1
    while true do
      local found = string.find(data, '"_tenant":{', from, true)
      if not found then break end
      at, from = found, found + 1
    end
    if at then
      t = string.match(data, '"tenantId":"([^"]*)"', at) or '-'
      iso = string.match(data, '"enqueuedAt":"([^"]*)"', at) or ''
    end
  end
  return stat(t), tonumber(r[2]) or 0, tonumber(r[3]) or 0, tonumber(r[4]) or 0, iso,
    tonumber(r[5]) or 0
end

-- A fair gate's held jobs sit in BullMQ's delayed set at 2^41 - 1 ms (see fair-bull.lua): the gate
-- counts them (as gated), so the delayed count stops below them.
local HELD = '(9007199254736896'

-- Up to the budget left, the oldest first: lists are pushed on the left, zsets are read low first.
local function ids(key, kind)
  local n
  if kind == 'list' then
    n = redis.call('LLEN', key)
  elseif kind == 'delayed' then
    n = redis.call('ZCOUNT', key, '-inf', HELD)
  else
    n = redis.call('ZCARD', key)
  end
  if n == 0 then return {} end
  local take = math.min(n, budget)
  if take < n then complete = 0 end
  budget = budget - take
  if take == 0 then return {} end
  if kind == 'list' then return redis.call('LRANGE', key, -take, -1) end
  return redis.call('ZRANGE', key, 0, take - 1)
end

for _, id in ipairs(ids(p .. 'active', 'list')) do
  local s = read(id)
  s[3] = s[3] + 1
end
local function waiting(list, turns)
  for _, id in ipairs(list) do
    local s, ts, delay, _, iso, priority = read(id)
    if not (turns and priority > 0 and priority % 2 == 0) then s[1] = s[1] + 1 end
    local due = ts + delay
    if s[5] < 0 or due < s[5] then s[5] = due end
    if delay == 0 and iso ~= '' and (s[6] == '' or iso < s[6]) then s[6] = iso end
  end
end
waiting(ids(p .. 'wait', 'list'))
waiting(ids(p .. 'paused', 'list'))
waiting(ids(p .. 'prioritized', 'zset'), byTurn)
for _, id in ipairs(ids(p .. 'delayed', 'delayed')) do
  local s, _, _, atm = read(id)
  if atm > 0 then s[4] = s[4] + 1 else s[2] = s[2] + 1 end
end

local out = {complete}
for _, t in ipairs(order) do
  local s = stats[t]
  out[#out + 1] = t
  for i = 1, 6 do out[#out + 1] = s[i] end
end
return out
