--[[
  Frees the slots of finished jobs (final outcomes only), updates the slow lane, and dispatches
  the next jobs in the same call.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-common.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  slow lane config, JSON: threshold (0 = off), window (ms), recoverAt
  ARGV[4..] pairs: job id, outcome (c completed | f failed for good | x cancelled)
  Returns {{event, tenant, failures, ...}, {id, json, priority, ...}, ms until a rate-limited tenant wakes (-1 none)}.
]]
local now = nowMs()
local slowCfg = cjson.decode(ARGV[3])
local touched, events = {}, {}
for i = 4, #ARGV, 2 do
  releaseOne(ARGV[i], ARGV[i + 1], now, slowCfg, touched, events)
end
for t in pairs(touched) do
  if slowCfg.threshold > 0 then checkRecovery(t, now, slowCfg, events) end
  activate(t)
end
local out = dispatch(tonumber(ARGV[2]), now)
return {events, out, nextWake(now)}
