--[[
  Ends jobs that BullMQ refused at admission (options it does not accept), or whose gate entry
  this process could not read (not JSON): each becomes a failed BullMQ job with the reason (so the failed list, the dead letters and QueueEvents see it), its
  slot is freed, and the next jobs are dispatched.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  slow lane config (JSON, see fair-release.lua)
  ARGV[4]  unused (BullMQ's job key prefix is cfg.jp)
  ARGV[5..] quintuples: gate job id, reason, name, data json, opts json (the failed BullMQ job
           takes the gate job's id, see failedIdFor)
  Returns {{event, tenant, failures, ...}, {id, json, priority, ...}, wake ms} as fair-release.
]]
local now = nowMs()
local slowCfg = cjson.decode(ARGV[3])
local released = {}
for i = 5, #ARGV, 5 do
  local id = ARGV[i]
  if redis.call('HEXISTS', kJobs, id) == 1 then
    failInBull(id, ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], now)
    released[#released + 1] = id
    released[#released + 1] = 'f'
  end
end
local touched, events = {}, {}
releaseMany(released, now, slowCfg, touched, events)
afterRelease(touched, now, slowCfg, events)
local out = dispatch(tonumber(ARGV[2]), now)
flushTenants(now)
return {events, out, nextWake(now), budgetWoken()}
