--- @include "fair-turns"
--- @include "../modes/floors/fair-floor"
--[[
  The enqueue call of a queue that takes turns at add (cfg.dt), for a batch the producer added
  wholly at the placeholder priority (no job with its own priority or lifo) with no directory
  hints to write: what fair-enqueue.lua does for such a batch, without its dispatch, so the call
  composes only the parts turns need (each part's functions are defined anew on every call).
  Runs in the producer's MULTI right after BullMQ's own adds of the same jobs.
  - A tenant no rule holds and with nothing in the gate: its new jobs take their turn levels in
    BullMQ's prioritized set (placeByTurn).
  - Another tenant's new jobs go into the hold and to the tail of its backlog; a backlog that was
    empty puts its tenant in turn (activate). Nothing is admitted here: the reply asks the
    producer to kick the gate (a release call with nothing to free dispatches; the tick would
    within a tick otherwise).
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2..] pairs: job id, tenant
  Returns {'ok', 1 when the gate should dispatch now else 0}.
]]
local now = nowMs()
local ids = {}
for i = 2, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
-- A job is new when BullMQ holds it at the placeholder (the add just before wrote it; a re-add
-- of an id BullMQ has already wrote nothing); an id twice in one call is taken once.
local placed = readMany('ZMSCORE', cfg.jp .. 'prioritized', ids)
local groups, order, seen = {}, {}, {}
for j, id in ipairs(ids) do
  if isPlaced(placed[j]) and not seen[id] then
    seen[id] = true
    local t = ARGV[2 * j + 1]
    local group = groups[t]
    if not group then
      group = { t, {}, {} }
      groups[t] = group
      order[#order + 1] = t
    end
    group[2][#group[2] + 1] = id
    group[3][#group[3] + 1] = placed[j]
  end
end
if #order == 0 then return {'ok', 0} end
loadTenants(order)
local kick, held = 0, false
for _, t in ipairs(order) do
  local r, list = tenants[t], groups[t][2]
  if not ruleHeld(r) and len(r, '') == 0 then
    placeByTurn(t, r, list, groups[t][3], now)
  else
    toHold(list, now)
    if toBacklog(t, r, list) == 1 then kick = 1 end
    held = true
  end
end
turnFlush()
if held then flushTenants(now) end
return {'ok', kick}
