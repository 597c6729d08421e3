--[[
  Counts one queue's jobs per tenant from BullMQ's own lists, on demand (the inspector's
  backlog and in-flight figures): no per-job record of ours is involved.
  KEYS[1]  prefix of the queue's BullMQ keys, `<bullPrefix>:<queue>:` (one hash slot)
  ARGV[1]  most jobs to read (the oldest end of each list first), shared by the running, the
           waiting and the delayed jobs (see the budget below)
  ARGV[2]  '1' when a fair gate counts the jobs waiting their turn in the prioritized set (even
           priorities, priority by turn): they are not counted as waiting here (their oldest
           still is)
  ARGV[3]  the slot of jobs without a tenant (`NO_TENANT`, longer than any tenant id)
  Returns {complete (1 when every job was read), then per tenant: tenant, waiting (wait,
  paused, prioritized), delayed (not started yet; not the jobs a fair gate holds there, which
  the gate counts), running (active), retrying (delayed after a
  failed attempt), oldest due time of a waiting job (ms, -1 = none), oldest enqueuedAt among
  waiting jobs without a delay ('' = none)}. The tenant is read from the job's `_tenant`
  envelope (ARGV[3] when it has none).
]]
local p = KEYS[1]
local budget = tonumber(ARGV[1])
local byTurn = ARGV[2] == '1'
local none = ARGV[3]
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

-- The text of the JSON string that starts at `from` (just after its opening quote), escapes
-- kept (the caller unescapes it): up to the first quote no backslash escapes, so a tenant id
-- with a '"' in it (a custom tenantIdPattern may admit one) is read whole.
local function jsonText(data, from)
  local i = from
  while true do
    local q = string.find(data, '["\\]', i)
    if not q then return nil end
    if string.byte(data, q) == 34 then return string.sub(data, from, q - 1) end
    i = q + 2
  end
end

local function read(id)
  local r = redis.call('HMGET', p .. id, 'data', 'timestamp', 'delay', 'atm', 'priority')
  local data, t, iso = r[1], none, ''
  if data then
    -- The envelope is written last; a payload's own nested `_tenant` comes before it.
    local at, from = nil, 1
    while true do
      local found = string.find(data, '"_tenant":{', from, true)
      if not found then break end
      at, from = found, found + 1
    end
    if at then
      local _, open = string.find(data, '"tenantId":"', at, true)
      t = open and jsonText(data, open + 1) or none
      iso = string.match(data, '"enqueuedAt":"([^"]*)"', at) or ''
    end
  end
  return stat(t), tonumber(r[2]) or 0, tonumber(r[3]) or 0, tonumber(r[4]) or 0, iso,
    tonumber(r[5]) or 0
end

-- A fair gate's held jobs sit in BullMQ's delayed set at 2^41 - 1 ms (see fair-bull.lua): the gate
-- counts them (as gated), so the delayed count stops below them.
local HELD = '(9007199254736896'

-- How many jobs each key holds (O(1), or O(log n) for the delayed count).
local function size(key, kind)
  if kind == 'list' then return redis.call('LLEN', key) end
  if kind == 'delayed' then return redis.call('ZCOUNT', key, '-inf', HELD) end
  return redis.call('ZCARD', key)
end

-- The first `take` ids of a key, the oldest first: lists are pushed on the left, zsets are read
-- low first.
local function oldest(key, kind, take)
  if take <= 0 then return {} end
  if kind == 'list' then return redis.call('LRANGE', key, -take, -1) end
  return redis.call('ZRANGE', key, 0, take - 1)
end

-- The budget, shared by three classes of jobs: running (active), waiting (wait, paused,
-- prioritized) and delayed (retries' backoffs, delays). Each gets an equal part, and what one
-- does not need goes to the others, so a long prioritized set (a fair queue's turns) does not
-- leave the retries and delays unread (they are in-flight and backlog too).
local lists = {
  {{p .. 'active', 'list'}},
  {{p .. 'wait', 'list'}, {p .. 'paused', 'list'}, {p .. 'prioritized', 'zset'}},
  {{p .. 'delayed', 'delayed'}},
}
local sizes, need = {}, {}
for c, keys in ipairs(lists) do
  need[c] = 0
  for _, key in ipairs(keys) do
    sizes[key[1]] = size(key[1], key[2])
    need[c] = need[c] + sizes[key[1]]
  end
end
local give, open, left = {0, 0, 0}, {}, budget
for c = 1, 3 do if need[c] > 0 then open[#open + 1] = c end end
while left > 0 and #open > 0 do
  local each = math.max(1, math.floor(left / #open))
  local still = {}
  for _, c in ipairs(open) do
    local more = math.min(each, need[c] - give[c], left)
    give[c] = give[c] + more
    left = left - more
    if give[c] < need[c] then still[#still + 1] = c end
  end
  open = still
end
for c = 1, 3 do if give[c] < need[c] then complete = 0 end end

-- A class's ids, key by key in its order, up to its part of the budget.
local function take(c, k)
  local key = lists[c][k]
  local n = math.min(sizes[key[1]], give[c])
  give[c] = give[c] - n
  return oldest(key[1], key[2], n)
end

for _, id in ipairs(take(1, 1)) do
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
waiting(take(2, 1))
waiting(take(2, 2))
waiting(take(2, 3), byTurn)
for _, id in ipairs(take(3, 1)) do
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
