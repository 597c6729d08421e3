--[[
  Fair-gate prelude, fair keys (after fair-tenants, before fair-dispatch; see PRELUDE in
  fair-gate.script.ts): turns inside a tenant, on a queue with cfg.fk ('job' or 'actor').
  A tenant is picked as always (its pass in the lane's ready set; keys never enter it), then its
  job comes from the key with the lowest pass among its keys with work: stride scheduling with
  equal weights (each job advances its key's pass by 1; a key that wakes up starts at the lowest
  pass of the tenant's keys, so idleness earns no credit). Ties go to the lower key.
  Keys (l = lane, '' without lanes; key segments tkp()-escaped, so no two collide):
    :kq:<tkp(tenant)>:<tkp(key)>[:<lane>]  list of ids waiting under the key
    :kr:<tkp(tenant)>[:<lane>]             zset key->pass of the tenant's keys with work; the
                                           member '' stands for its jobs without a key
                                           (its plain :q: list), while it has keyed work
    :kl:<tkp(tenant)>[:<lane>]             hash key->length of the key's list
    :t:<tkp(tenant)> field kn[:<lane>]     the tenant's jobs waiting under keys (so it is in
                                           :conf, and loadTenants reads the count with its
                                           settings: a tenant without keyed work pays nothing)
  A tenant's backlog in a lane is its :bl count (its plain list) plus kn.
]]
local function kqKey(t, k, l)
  if k == '' then return qKey(t, l) end
  local key = base .. ':kq:' .. tkp(t) .. ':' .. tkp(k)
  if l == '' then return key end
  return key .. ':' .. l
end
local function krKey(t, l)
  if l == '' then return base .. ':kr:' .. tkp(t) end
  return base .. ':kr:' .. tkp(t) .. ':' .. l
end
local function klKey(t, l)
  if l == '' then return base .. ':kl:' .. tkp(t) end
  return base .. ':kl:' .. tkp(t) .. ':' .. l
end

-- The tenant's jobs waiting under keys in lane l.
local function keyedLen(r, l)
  local kn = r.kn
  return kn and kn[l] or 0
end

-- Appends ids under key k of tenant t in lane l. Returns true when the tenant had no keyed work
-- in the lane before (it may need to be put in turn).
local function enqueueKeyed(t, l, k, ids)
  local length = 0
  local kq = kqKey(t, k, l)
  for i = 1, #ids, CHUNK do
    length = redis.call('RPUSH', kq, unpack(ids, i, math.min(#ids, i + CHUNK - 1)))
  end
  redis.call('HSET', klKey(t, l), k, length)
  if length == #ids then
    local kr = krKey(t, l)
    local low = redis.call('ZRANGE', kr, 0, 0, 'WITHSCORES')
    redis.call('ZADD', kr, 'NX', low[2] or 0, k)
  end
  local kn = redis.call('HINCRBY', tKey(t), sf('kn', l), #ids)
  redis.call('SADD', kConf, t)
  local r = tenants[t]
  if r then
    r.kn = r.kn or {}
    r.kn[l] = kn
  end
  return kn == #ids
end

-- Enqueue's groups {tenant, lane, ids}: those whose lane is "<lane>\n<key>" go under their key
-- (tenants that may need to be put in turn are set in `wake`); returns the other groups.
local function enqueueKeyedGroups(groups, wake)
  local plain = {}
  for _, group in ipairs(groups) do
    local t, l = group[1], group[2]
    local nl = string.find(l, '\n', 1, true)
    if nl then
      if enqueueKeyed(t, string.sub(l, 1, nl - 1), string.sub(l, nl + 1), group[3]) then
        wake[t] = true
      end
    else
      plain[#plain + 1] = group
    end
  end
  return plain
end

-- The next n turns among tenant t's keys in lane l, read only. Loads the key set in pages of n
-- (a key not loaded yet has a pass at or above the last one loaded, `bound`). Returns a plan:
-- order (the key of each turn), takes (key->jobs), pass (key->its pass after its turns), count
-- (key->jobs waiting), stale (keys listed with no work), plain (the pass the jobs without a key
-- start at, when they are not in the set yet), keyed (a key other than '' has work, or the set
-- was not read to its end).
local function keyedPlan(t, r, l, n)
  local kr, kl = krKey(t, l), klKey(t, l)
  local plain = r.len[l]
  local plan = { order = {}, takes = {}, pass = {}, count = {}, stale = {}, plain = nil }
  local heap, off, bound, low, sawPlain = {}, 0, nil, nil, false
  local function page()
    local rows = redis.call('ZRANGE', kr, off, off + n, 'WITHSCORES')
    local got = #rows / 2
    local take = got
    if got > n then
      take = n
      bound = { rows[2 * got - 1], tonumber(rows[2 * got]) }
    else
      bound = nil
    end
    local keys = {}
    for i = 1, take do keys[i] = rows[2 * i - 1] end
    local lens = hmgetMany(kl, keys)
    for i = 1, take do
      local k, p = keys[i], tonumber(rows[2 * i])
      if low == nil then low = p end
      local c = tonumber(lens[i]) or 0
      if k == '' then
        c = plain
        sawPlain = true
      end
      if c > 0 then
        if k ~= '' then plan.keyed = true end
        plan.count[k] = c
        heapPush(heap, { k, p })
      else
        plan.stale[#plan.stale + 1] = k
      end
    end
    off = off + take
  end
  page()
  if plain > 0 and not sawPlain and not redis.call('ZSCORE', kr, '') then
    plan.plain = low or 0
    plan.count[''] = plain
    heapPush(heap, { '', plan.plain })
  end
  local taken = 0
  while taken < n do
    local top = heap[1]
    if top and not (bound and less(bound, top)) then
      heapPop(heap)
      local k = top[1]
      local got = (plan.takes[k] or 0) + 1
      plan.takes[k] = got
      plan.order[#plan.order + 1] = k
      plan.pass[k] = top[2] + 1
      taken = taken + 1
      if got < plan.count[k] then heapPush(heap, { k, top[2] + 1 }) end
    elseif bound then
      page()
    else
      break
    end
  end
  if bound then plan.keyed = true end
  return plan
end

-- Takes n jobs of tenant t in lane l in its keys' turns (the tenant has keyed work there) and
-- writes the keys' passes and lengths back. Returns the ids, in turn order.
local function takeKeyed(t, r, l, n)
  local plan = keyedPlan(t, r, l, n)
  local kr, kl = krKey(t, l), klKey(t, l)
  local lists, zadd, zrem, hset, hdel = {}, {}, {}, {}, {}
  local keyedTaken = 0
  for k, c in pairs(plan.takes) do
    local ids = redis.call('LPOP', kqKey(t, k, l), c) or {}
    lists[k] = { ids, 0 }
    local left = plan.count[k] - c
    -- A shorter list than its count says (never expected): it is empty now.
    if #ids < c then left = 0 end
    if k == '' then
      r.len[l] = left
    else
      keyedTaken = keyedTaken + plan.count[k] - left
    end
    if left > 0 then
      zadd[#zadd + 1] = int(plan.pass[k])
      zadd[#zadd + 1] = k
      if k ~= '' then
        hset[#hset + 1] = k
        hset[#hset + 1] = int(left)
      end
    else
      zrem[#zrem + 1] = k
      if k ~= '' then hdel[#hdel + 1] = k end
    end
  end
  if plan.plain and not plan.takes[''] then
    zadd[#zadd + 1] = int(plan.plain)
    zadd[#zadd + 1] = ''
  end
  for _, k in ipairs(plan.stale) do
    zrem[#zrem + 1] = k
    if k ~= '' then hdel[#hdel + 1] = k end
  end
  local kn = keyedLen(r, l) - keyedTaken
  -- No key has work although the count says so (never expected): the count is reset.
  if not plan.keyed then kn = 0 end
  if kn > 0 and keyedTaken > 0 then kn = redis.call('HINCRBY', tKey(t), sf('kn', l), -keyedTaken) end
  if kn <= 0 then
    -- No keyed work left in the lane: the tenant's plain list alone again.
    clearSettings(t, sf('kn', l))
    redis.call('DEL', kr, kl)
    r.kn[l] = 0
  else
    r.kn[l] = kn
    if #zrem > 0 then variadic('ZREM', kr, zrem) end
    if #zadd > 0 then variadic('ZADD', kr, zadd) end
    if #hdel > 0 then variadic('HDEL', kl, hdel) end
    if #hset > 0 then variadic('HSET', kl, hset) end
  end
  local out = {}
  for _, k in ipairs(plan.order) do
    local q = lists[k]
    q[2] = q[2] + 1
    local id = q[1][q[2]]
    if id then out[#out + 1] = id end
  end
  return out
end

-- How many of tenant t's jobs in lane l go before the job at index p of key k's list (equal
-- weights: the job is taken at pass P_k + p; each other key j gets its turns below that pass,
-- and at that pass too when it is the lower key). Read only.
local function keyedPosition(t, r, l, k, p)
  local rows = redis.call('ZRANGE', krKey(t, l), 0, -1, 'WITHSCORES')
  local lens = redis.call('HGETALL', klKey(t, l))
  local count, pass = {}, {}
  for i = 1, #lens, 2 do count[lens[i]] = tonumber(lens[i + 1]) end
  count[''] = r.len[l]
  for i = 1, #rows, 2 do pass[rows[i]] = tonumber(rows[i + 1]) end
  if pass[''] == nil and count[''] > 0 then pass[''] = tonumber(rows[2]) or 0 end
  local at = (pass[k] or 0) + p
  local ahead = p
  for j, pj in pairs(pass) do
    if j ~= k then
      local turns = at - pj
      if j < k then turns = turns + 1 end
      ahead = ahead + math.max(0, math.min(count[j] or 0, turns))
    end
  end
  return ahead
end
