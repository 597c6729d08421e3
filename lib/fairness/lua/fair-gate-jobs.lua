--- @include "fair-keys"
--- @include "../modes/fair-keys/fair-fairkey"
--[[
  Read only: the next jobs waiting in one tenant's backlog, then (priority by turn) those
  waiting their turn in BullMQ's prioritized set, in its ledger's order (fair-turns.lua), for the
  dashboard's job list.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  tenant
  ARGV[3]  most jobs to return
  Returns {lane, id, json, ...}, json {"n": name, "d": data, "o": options} read from the job
  BullMQ holds (its stored options), lanes in priority order, each lane's next job first (with fair
  keys, in the turns of the tenant's keys). Writes nothing.
]]
local t, limit = ARGV[2], tonumber(ARGV[3])
local out = {}

for _, l in ipairs(LANES) do
  local left = limit - #out / 3
  if left <= 0 then break end
  local ids = backlogIds(t, l, left)
  if #ids > 0 then
    for _, id in ipairs(ids) do
      local h = redis.call('HMGET', cfg.jp .. id, 'name', 'data', 'opts')
      if h[1] then
        out[#out + 1] = l
        out[#out + 1] = id
        out[#out + 1] = '{"n":' .. cjson.encode(h[1]) .. ',"d":' .. (h[2] or '{}') .. ',"o":' ..
          (h[3] or '{}') .. '}'
      end
    end
  end
end
-- Priority by turn: the ledger's live part (ledgerLive, fair-keys.lua), still in BullMQ's
-- prioritized set, in order (lane '').
local function add(id)
  local h = redis.call('HMGET', cfg.jp .. id, 'name', 'data', 'opts')
  if h[1] then
    out[#out + 1] = ''
    out[#out + 1] = id
    out[#out + 1] = '{"n":' .. cjson.encode(h[1]) .. ',"d":' .. (h[2] or '{}') .. ',"o":' ..
      (h[3] or '{}') .. '}'
  end
end
if cfg.dt and #out / 3 < limit then
  local _, lo = ledgerLive(t)
  local ids = redis.call('LRANGE', dKey(t), lo, lo + 2 * (limit - #out / 3))
  local at = readMany('ZMSCORE', cfg.jp .. 'prioritized', ids)
  for i, id in ipairs(ids) do
    if #out / 3 >= limit then break end
    if at[i] then add(id) end
  end
end
return out
