--- @include "fair-keys"
--- @include "../modes/fair-keys/fair-fairkey"
--[[
  Read only: the tenants that have jobs held in the gate (a backlog in some lane: paused, at
  their cap, rate limited, on the slow lane, or waiting for the window), the longest held first,
  for the inspector's tenant list. Such a tenant may see no enqueue, start or result for hours,
  so the list of the most recently active tenants leaves it out.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  most tenants to return
  ARGV[3]  most backlog entries to look at, over every lane's :bl hash (HSCAN): the read stays
           bounded with any number of tenants; past it the tenants seen are a sample
  Returns {tenant, time its next held job was enqueued (ms, BullMQ's `timestamp`), ...},
  oldest first. Writes nothing.
]]
local limit, budget = tonumber(ARGV[2]), tonumber(ARGV[3])
local since, order = {}, {}
for _, l in ipairs(LANES) do
  local cursor = '0'
  repeat
    local page = redis.call('HSCAN', bKey(l), cursor, 'COUNT', math.min(budget, 1000))
    cursor = page[1]
    local entries = page[2]
    for i = 1, #entries, 2 do
      local t = entries[i]
      if tonumber(entries[i + 1]) > 0 then
        local id = backlogIds(t, l, 1)[1]
        local at = id and tonumber(redis.call('HGET', cfg.jp .. id, 'timestamp'))
        if at then
          if not since[t] then order[#order + 1] = t end
          if not since[t] or at < since[t] then since[t] = at end
        end
      end
    end
    budget = budget - #entries / 2
  until cursor == '0' or budget <= 0
  if budget <= 0 then break end
end
table.sort(order, function(a, b)
  if since[a] ~= since[b] then return since[a] < since[b] end
  return a < b
end)
local out = {}
for i = 1, math.min(limit, #order) do
  out[#out + 1] = order[i]
  out[#out + 1] = since[order[i]]
end
return out
