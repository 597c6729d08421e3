--[[
  Ends jobs that BullMQ refused at admission (options it does not accept): each becomes a failed
  BullMQ job with the reason (so the failed list, the dead letters and QueueEvents see it), its
  slot is freed, and the next jobs are dispatched.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  slow lane config (JSON, see fair-release.lua)
  ARGV[4]  BullMQ job key prefix ({<prefix>:<queue>}:<queue>:)
  ARGV[5..] sextuples: gate job id, id of the failed BullMQ job, reason, name, data json, opts json
  Returns {{event, tenant, failures, ...}, {id, json, priority, ...}, wake ms} as fair-release.
]]
local now = nowMs()
local slowCfg = cjson.decode(ARGV[3])
local jobPrefix = ARGV[4]
local released = {}
for i = 5, #ARGV, 6 do
  local id, failedId, reason = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HEXISTS', kJobs, id) == 1 then
    local jk = jobPrefix .. failedId
    if redis.call('EXISTS', jk) == 0 then
      redis.call('HSET', jk, 'name', ARGV[i + 3], 'data', ARGV[i + 4], 'opts', ARGV[i + 5],
                 'timestamp', now, 'delay', 0, 'priority', 0, 'processedOn', now,
                 'finishedOn', now, 'failedReason', reason, 'stacktrace', '[]',
                 'attemptsMade', 1, 'attemptsStarted', 0)
      redis.call('ZADD', jobPrefix .. 'failed', now, failedId)
      redis.call('XADD', jobPrefix .. 'events', 'MAXLEN', '~', 10000, '*', 'event', 'failed',
                 'jobId', failedId, 'failedReason', reason, 'prev', 'waiting')
    end
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
