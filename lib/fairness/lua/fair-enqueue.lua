--[[
  Enqueue into the fair gate, then dispatch what the window allows (the fast path: a light
  tenant's job goes straight through in the same call).
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-common.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  per-tenant backlog limit (0 = none)
  ARGV[4]  directory/tier hints, JSON {tenant: [weight, cap, rate, lanes]} ({} when none)
  ARGV[5..] quadruples: job id, tenant, lane ('' without lanes), job json
  Returns {'full', tenant, backlog} with nothing written, or {'ok', {id, json, priority, ...}, wake ms}.
]]
local maxBacklog = tonumber(ARGV[3])
if maxBacklog > 0 then
  local counts = {}
  for i = 5, #ARGV, 4 do
    if redis.call('HEXISTS', kJobs, ARGV[i]) == 0 then
      counts[ARGV[i + 1]] = (counts[ARGV[i + 1]] or 0) + 1
    end
  end
  for t, c in pairs(counts) do
    local len = backlog(t)
    if len + c > maxBacklog then return {'full', t, len} end
  end
end
applyHints(cjson.decode(ARGV[4]))
local touched = {}
for i = 5, #ARGV, 4 do
  local id, t, l = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HSETNX', kJobs, id, t) == 1 then
    redis.call('HSET', kData, id, ARGV[i + 3])
    redis.call('RPUSH', qKey(t, l), id)
    touched[t] = true
  end
end
for t in pairs(touched) do activate(t) end
local now = nowMs()
local out = dispatch(tonumber(ARGV[2]), now)
return {'ok', out, nextWake(now)}
