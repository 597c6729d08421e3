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
  tenants with a backlog under the other layout and their ids, once per change of layout, in
  calls of about ARGV[4] ids (a tenant's ids move whole, in one call): a call that stops short
  records the layout it moves from (`:layout:from`) and answers 1 in its last field, and the
  caller calls again until it answers 0; a process that dies between calls leaves that record,
  and the next process of this layout goes on with it.
  KEYS[1]  gate base key
  KEYS[2]  BullMQ's delayed zset of the queue
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  the layout this process runs (JSON: {"lanes":[...],"fairKeys":bool})
  ARGV[3]  the lane of ids whose lane this gate does not have ('' without lanes)
  ARGV[4]  about how many ids to move in this call
  Returns {layout moved from ('' when none or the same), jobs held, ids moved, 1 when more is
  left to move (call again) else 0}.
]]
-- The hold score's floor (fair-bull.lua: HOLD_TS * 0x1000).
local HOLD_MIN = 9007199254736896
local kLayout, kFrom = base .. ':layout', base .. ':layout:from'
local current = redis.call('GET', kLayout) or ''
local before, held = false, 0
if current == ARGV[2] then
  -- This layout's: a move begun by a process of it and not finished, or nothing to do.
  before = redis.call('GET', kFrom)
  if not before then return {'', 0, 0, 0} end
  held = redis.call('ZCOUNT', KEYS[2], HOLD_MIN, '+inf')
else
  redis.call('SET', kLayout, ARGV[2])
  held = redis.call('ZCOUNT', KEYS[2], HOLD_MIN, '+inf')
  if current == '' then
    redis.call('DEL', kFrom)
    return {'', held, 0, 0}
  end
  before = current
  redis.call('SET', kFrom, before)
end
local old = cjson.decode(before)
local oldLanes = old.lanes
if #oldLanes == 0 then oldLanes = {''} end
local ours = {}
for _, l in ipairs(LANES) do ours[l] = true end
local oldFk, fk = old.fairKeys == true, cfg.fk ~= nil
local budget = tonumber(ARGV[4])
local function oldKey(t, l) return oldFk and kzKey(t, l) or qKey(t, l) end
local function ids(t, l)
  if oldFk then return redis.call('ZRANGE', kzKey(t, l), 0, -1) end
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
      -- Moved already (by an earlier call) when its backlog in the old form is gone and, for
      -- another lane, its count there too.
      if redis.call('EXISTS', oldKey(t, lo)) == 1 or ln ~= lo then
        if moved >= budget then return {before, held, moved, 1} end
        local list = ids(t, lo)
        redis.call('DEL', oldKey(t, lo))
        if oldFk then redis.call('DEL', ktKey(t, lo)) end
        if ln ~= lo then redis.call('HDEL', bKey(lo), t) end
        local n = #list > 0 and append(t, ln, list) or length(t, ln)
        if n > 0 then redis.call('HSET', bKey(ln), t, n) else redis.call('HDEL', bKey(ln), t) end
        moved = moved + #list
      end
    end
    if ln ~= lo then redis.call('DEL', rKey(lo), pKey(lo)) end
  end
end
redis.call('DEL', kFrom)
return {before, held, moved, 0}
