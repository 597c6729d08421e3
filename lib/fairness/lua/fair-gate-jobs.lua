--[[
  Read only: the next jobs waiting in one tenant's backlog, for the dashboard's job list.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  tenant
  ARGV[3]  most jobs to return
  Returns {lane, id, json, ...}, lanes in priority order, each lane's next job first (with fair
  keys, in the turns of the tenant's keys). Writes nothing.
]]
local t, limit = ARGV[2], tonumber(ARGV[3])
local out = {}

-- The next n ids of a tenant with work under fair keys, in its keys' turns.
local function keyedIds(r, l, n)
  local plan = keyedPlan(t, r, l, n)
  local lists = {}
  for k, c in pairs(plan.takes) do
    lists[k] = { redis.call('LRANGE', kqKey(t, k, l), 0, c - 1), 0 }
  end
  local ids = {}
  for _, k in ipairs(plan.order) do
    local q = lists[k]
    q[2] = q[2] + 1
    if q[1][q[2]] then ids[#ids + 1] = q[1][q[2]] end
  end
  return ids
end

for _, l in ipairs(LANES) do
  local left = limit - #out / 3
  if left <= 0 then break end
  local ids
  if cfg.fk and keyedLen(tenant(t), l) > 0 then
    ids = keyedIds(tenant(t), l, left)
  else
    ids = redis.call('LRANGE', qKey(t, l), 0, left - 1)
  end
  if #ids > 0 then
    local vals = hmgetMany(kJobs, ids)
    for i, id in ipairs(ids) do
      if vals[i] then
        local json = jobJson(vals[i])
        out[#out + 1] = l
        out[#out + 1] = id
        out[#out + 1] = json
      end
    end
  end
end
return out
