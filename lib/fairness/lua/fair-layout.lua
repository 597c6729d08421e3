--- @include "fair-keys"
--- @include "../modes/fair-keys/fair-fairkey"
--[[
  Takes the queue's backlog into the keys this process's gate reads, when another process ran
  the gate with other lanes or fair keys (run when a process starts its gate, then every
  LAYOUT_CHECK_MS; off the job path). A gate reads only the backlog keys of its layout (its lanes,
  and a list or, with fair keys, a zset per tenant and lane: fair-keys.lua, fair-fairkey.lua),
  so without this, ids queued under another layout would wait, held in BullMQ's delayed set,
  until a process of that layout admitted them. Each tenant's ids move in their order to the end
  of its backlog in the same lane when this gate has it, else in `ARGV[3]`; the other layout's
  lane turns go (the caller puts the tenants back in turn: fair-admin.lua, `wake`). Cost: the
  tenants with a backlog under the other layout and their ids, once per change of layout.
  KEYS[1]  gate base key
  KEYS[2]  BullMQ's delayed zset of the queue
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  the layout this process runs (JSON: {"lanes":[...],"fairKeys":bool})
  ARGV[3]  the lane of ids whose lane this gate does not have ('' without lanes)
  Returns {layout recorded before ('' when none or the same), jobs held, ids moved}.
]]
-- The hold score's floor (fair-bull.lua: HOLD_TS * 0x1000).
local HOLD_MIN = 9007199254736896
local kLayout = base .. ':layout'
local before = redis.call('GET', kLayout) or ''
if before == ARGV[2] then return {'', 0, 0} end
redis.call('SET', kLayout, ARGV[2])
local held = redis.call('ZCOUNT', KEYS[2], HOLD_MIN, '+inf')
if before == '' then return {'', held, 0} end
local old = cjson.decode(before)
local oldLanes = old.lanes
if #oldLanes == 0 then oldLanes = {''} end
local ours = {}
for _, l in ipairs(LANES) do ours[l] = true end
local oldFk, fk = old.fairKeys == true, cfg.fk ~= nil
local function ids(t, l, keyed)
  if keyed then return redis.call('ZRANGE', kzKey(t, l), 0, -1) end
  return redis.call('LRANGE', qKey(t, l), 0, -1)
end
local function length(t, l)
  if fk then return redis.call('ZCARD', kzKey(t, l)) end
  return redis.call('LLEN', qKey(t, l))
end
-- Appends `list` to tenant t's backlog in lane l (with fair keys: before any later key turn is
-- taken, in order, after what the zset holds).
local function append(t, l, list)
  if not fk then return variadic('RPUSH', qKey(t, l), list) end
  local last = redis.call('ZRANGE', kzKey(t, l), -1, -1, 'WITHSCORES')[2]
  local at, rows = last and tonumber(last) + 1 or 0, {}
  for i, id in ipairs(list) do
    rows[#rows + 1] = at + i - 1
    rows[#rows + 1] = id
  end
  variadic('ZADD', kzKey(t, l), rows)
  return redis.call('ZCARD', kzKey(t, l))
end
local moved = 0
for _, lo in ipairs(oldLanes) do
  local ln = ours[lo] and lo or ARGV[3]
  if ln ~= lo or oldFk ~= fk then
    for _, t in ipairs(redis.call('HKEYS', bKey(lo))) do
      local list = ids(t, lo, oldFk)
      redis.call('DEL', oldFk and kzKey(t, lo) or qKey(t, lo))
      if oldFk then redis.call('DEL', ktKey(t, lo)) end
      if ln ~= lo then redis.call('HDEL', bKey(lo), t) end
      local n = #list > 0 and append(t, ln, list) or length(t, ln)
      if n > 0 then redis.call('HSET', bKey(ln), t, n) else redis.call('HDEL', bKey(ln), t) end
      moved = moved + #list
    end
    if ln ~= lo then redis.call('DEL', rKey(lo), pKey(lo)) end
  end
end
return {before, held, moved}
