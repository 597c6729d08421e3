--- @include "../../lua/fair-keys"
--[[
  Fair-gate part, mode budget (includes fair-keys; fair-tenants includes it): one budget across queues
  (`registerQueue({ budget })`). Only with cfg.bg set; a queue without a budget runs none of it
  (a few `if BG` tests, no Redis call). Every queue of a budget has its keys
  under the budget's hash tag ({<prefix>:~budget:<budget>}:<queue>:~fair...), so the budget's
  own keys are in the same slot as every gate of the group and one script call reads and writes
  them atomically:
  cfg.bg   budget base {<prefix>:~budget:<budget>}:~budget    cfg.bn  this queue's name
  Keys: <bg>:inf hash tenant->jobs admitted and not released in all the budget's queues (the sum
        of their own :inf) | <bg>:tat hash tenant->GCRA tat shared by the queues (replaces :tat)
        | <bg>:held hash tenant->":q1:q2:" the queues holding the tenant back for its cap
        | <bg>:wake:<queue> set of tenants to put back in turn in that queue
  A tenant is capped in a queue when the budget's count reaches the cap. A queue that holds one
  back records it in :held; a release in another queue hands the freed slot over (the releasing
  queue does not take it again in that call) by moving the tenant to the holding queues' :wake
  sets, which they read at their next call; any call that ends with the tenant under its cap
  wakes every queue holding it; the tick re-checks up to 100 held tenants. The scripts return
  the woken queues, whose gates in this process dispatch at once (other processes' at their next
  tick).
]]
local BG = cfg.bg
local kBInf, kBHeld
if BG then
  kBInf = BG .. ':inf'
  kBHeld = BG .. ':held'
  kTat = BG .. ':tat'
end
-- Queues woken by this call (returned to the process), and tenants this queue holds back.
local bWoken, bHolds, bHoldSeen = {}, {}, {}

-- The budget's count of the tenants just loaded (records by id in `recs`).
local function budgetLoad(need, recs)
  local counts = hmgetMany(kBInf, need)
  for i, t in ipairs(need) do
    local r = recs[t]
    r.binf = tonumber(counts[i]) or 0
  end
end

-- Jobs of the tenant in flight in the whole budget, this call's changes included.
local function budgetInFlight(r) return r.binf + r.inf - r.inf0 end

-- At the cap for the budget, or handing its freed slot over to another queue in this call.
local function budgetCapped(r) return r.handed or budgetInFlight(r) >= r.cap end

-- The queue holds the tenant back for its cap (written at the end of the call).
local function budgetHold(t)
  if bHoldSeen[t] then return end
  bHoldSeen[t] = true
  bHolds[#bHolds + 1] = t
end

-- Moves the tenants of `list` from the queues holding them to those queues' wake sets. With
-- `handover` (slots freed here), the other queues only: this queue leaves the freed slots to
-- them in this call and holds the tenant itself (its release path re-checks it). Without (the
-- tenant is under its cap at the end of a call), every holding queue, this one included.
local function budgetWakeHolders(list, recs, handover)
  if #list == 0 then return end
  local held = hmgetMany(kBHeld, list)
  local own = ':' .. cfg.bn .. ':'
  local wake, keep, drop = {}, {}, {}
  for i, t in ipairs(list) do
    local v = held[i]
    if v and not (handover and v == own) then
      for q in string.gmatch(v, '[^:]+') do
        if q ~= cfg.bn or not handover then
          wake[q] = wake[q] or {}
          wake[q][#wake[q] + 1] = t
        end
      end
      if handover and string.find(v, own, 1, true) then
        keep[#keep + 1] = t
        keep[#keep + 1] = own
      else
        drop[#drop + 1] = t
      end
      if handover then recs[t].handed = true end
    end
  end
  for q, ts in pairs(wake) do
    variadic('SADD', BG .. ':wake:' .. q, ts)
    bWoken[q] = true
  end
  if #keep > 0 then variadic('HSET', kBHeld, keep) end
  if #drop > 0 then variadic('HDEL', kBHeld, drop) end
end

-- Slots freed in this queue (the tenants of the set `touched`): handed over to the queues
-- holding these tenants (only a tenant with a cap is ever held).
local function budgetReleased(touched, recs)
  local list = {}
  for t in pairs(touched) do
    if recs[t].cap > 0 then list[#list + 1] = t end
  end
  budgetWakeHolders(list, recs, true)
end

-- Start of a dispatch: the tenants other queues woke for this one go back in turn.
local function budgetWake(load, act)
  local due = redis.call('SPOP', BG .. ':wake:' .. cfg.bn, 1000)
  if #due == 0 then return end
  load(due)
  for _, t in ipairs(due) do act(t) end
end

-- The tick's safety net: up to 100 tenants some queue of the budget holds back are re-checked
-- here (in turn again if under the cap; the end of the call then wakes the queues holding them).
local function budgetRecheck(load, act)
  local some = redis.call('HRANDFIELD', kBHeld, 100)
  if #some == 0 then return end
  load(some)
  for _, t in ipairs(some) do act(t) end
end

-- End of a call (recs: the tenants it loaded, after their own writes; counts: flat {tenant,
-- count} of the budget's counts that changed): writes the counts, wakes the queues holding a
-- tenant that is under its cap now, records this queue's holds.
local function budgetFlush(recs, counts)
  local set, del = {}, {}
  for i = 1, #counts, 2 do
    if counts[i + 1] > 0 then
      set[#set + 1] = counts[i]
      set[#set + 1] = int(counts[i + 1])
    else
      del[#del + 1] = counts[i]
    end
  end
  if #set > 0 then variadic('HSET', kBInf, set) end
  if #del > 0 then variadic('HDEL', kBInf, del) end
  local room = {}
  for t, r in pairs(recs) do
    if r.cap > 0 and not bHoldSeen[t] and r.binf < r.cap then room[#room + 1] = t end
  end
  budgetWakeHolders(room, recs, false)
  if #bHolds == 0 then return end
  local held = hmgetMany(kBHeld, bHolds)
  local own = cfg.bn .. ':'
  local writes = {}
  for i, t in ipairs(bHolds) do
    local v = held[i]
    if not v then
      writes[#writes + 1] = t
      writes[#writes + 1] = ':' .. own
    elseif not string.find(v, ':' .. own, 1, true) then
      writes[#writes + 1] = t
      writes[#writes + 1] = v .. own
    end
  end
  if #writes > 0 then variadic('HSET', kBHeld, writes) end
end

-- The queues this call woke, for the process to kick (nil without a budget: no extra reply).
local function budgetWoken()
  if not BG then return nil end
  local out = {}
  for q in pairs(bWoken) do out[#out + 1] = q end
  return out
end
