--[[
  Enqueue into the fair gate, then dispatch what the window allows (the fast path: a light
  tenant's job goes straight through in the same call).
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-common.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  per-tenant backlog limit (0 = none)
  ARGV[4]  directory hints, JSON {tenant: [weight|false, cap|false]} ({} when none)
  ARGV[5..] triples: job id, tenant, job json
  Returns {'full', tenant, backlog} with nothing written, or {'ok', {id, json, ...}} to send.
]]
local maxBacklog = tonumber(ARGV[3])
if maxBacklog > 0 then
  local counts = {}
  for i = 5, #ARGV, 3 do
    if redis.call('HEXISTS', kJobs, ARGV[i]) == 0 then
      counts[ARGV[i + 1]] = (counts[ARGV[i + 1]] or 0) + 1
    end
  end
  for t, c in pairs(counts) do
    local len = redis.call('LLEN', qKey(t))
    if len + c > maxBacklog then return {'full', t, len} end
  end
end
local hints = cjson.decode(ARGV[4])
for t, h in pairs(hints) do
  if h[1] then redis.call('HSET', tKey(t), 'dw', h[1]) else redis.call('HDEL', tKey(t), 'dw') end
  if h[2] then redis.call('HSET', tKey(t), 'dcap', h[2]) else redis.call('HDEL', tKey(t), 'dcap') end
end
local touched = {}
for i = 5, #ARGV, 3 do
  local id, t = ARGV[i], ARGV[i + 1]
  if redis.call('HSETNX', kJobs, id, t) == 1 then
    redis.call('HSET', kData, id, ARGV[i + 2])
    redis.call('RPUSH', qKey(t), id)
    touched[t] = true
  end
end
for t in pairs(touched) do activate(t) end
return {'ok', dispatch(tonumber(ARGV[2]), nowMs())}
