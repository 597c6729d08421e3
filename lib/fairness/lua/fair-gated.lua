--- @include "fair-keys"
--[[
  Read only: how many jobs each of many tenants has waiting in the gate (its backlog over every
  lane, the :bl counts dispatch keeps), for the metrics gauges: one call per page of tenants
  instead of one per tenant.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2..] tenants
  Returns one count per tenant, in ARGV's order. Writes nothing.
]]
local list = {}
for i = 2, #ARGV do list[#list + 1] = ARGV[i] end
local out = {}
for i = 1, #list do out[i] = 0 end
for _, l in ipairs(LANES) do
  local counts = hmgetMany(bKey(l), list)
  for i = 1, #list do out[i] = out[i] + (tonumber(counts[i]) or 0) end
end
-- Priority by turn: what each tenant has queued in BullMQ by its turns (its ledger, fair-turns.lua,
-- which may still count ids BullMQ took since its last trim).
if cfg.dt then
  for i = 1, #list do out[i] = out[i] + redis.call('LLEN', dKey(list[i])) end
end
return out
