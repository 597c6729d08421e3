--[[
  Periodic upkeep, run by every process: consumer heartbeat and window, acknowledgements, lease
  reaping (a dead process never holds a slot), re-sending jobs that never reached BullMQ,
  slow-lane recovery, dispatch.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  slow lane config (JSON, see fair-release.lua)
  ARGV[4]  BullMQ job key prefix ({<prefix>:<queue>}:<queue>:)
  ARGV[5]  unused (the re-send delay is cfg.resend)
  ARGV[6]  consumer id of this process
  ARGV[7]  this process's worker concurrency (0 = no worker, -1 = leaving)
  ARGV[8]  consumer heartbeat ttl (ms)
  ARGV[9]  window per consumer slot (factor)
  ARGV[10] n, the number of acknowledged ids that follow
  ARGV[11..10+n] acknowledged ids
  Returns {{event, tenant, failures, ...} (event 'floors': floors were held to the bound beyond
           the window, failures = the floor tenants below their floor), {id, json, priority, ...}, ms until a rate-limited tenant wakes (-1 none),
           with a budget: the queues it woke}.
]]
local now = nowMs()
local slowCfg = cjson.decode(ARGV[3])
local jobPrefix = ARGV[4]
local kConsumers = base .. ':consumers'
local kConc = base .. ':conc'
local conc = tonumber(ARGV[7])
if conc > 0 then
  redis.call('ZADD', kConsumers, now + tonumber(ARGV[8]), ARGV[6])
  redis.call('HSET', kConc, ARGV[6], conc)
elseif conc < 0 then
  redis.call('ZREM', kConsumers, ARGV[6])
  redis.call('HDEL', kConc, ARGV[6])
end
local dead = redis.call('ZRANGEBYSCORE', kConsumers, '-inf', now, 'LIMIT', 0, 100)
for _, id in ipairs(dead) do
  redis.call('ZREM', kConsumers, id)
  redis.call('HDEL', kConc, id)
end
local total = 0
for _, v in ipairs(redis.call('HVALS', kConc)) do total = total + tonumber(v) end
local win = math.max(cfg.minWin, math.ceil(total * tonumber(ARGV[9])))
redis.call('HSET', kState, 'window', win, 'slots', total)

local touched, events, released, out = {}, {}, {}, {}
local acks = {}
for i = 11, 10 + tonumber(ARGV[10]) do acks[#acks + 1] = ARGV[i] end
acknowledge(acks, now, slowCfg, touched, events)

local delivered = 2 * (now + cfg.lease) + 1
local transit = 2 * (now + (cfg.resend or 30000))
local expired = redis.call('ZRANGEBYSCORE', kLeases, '-inf', 2 * now + 1, 'WITHSCORES', 'LIMIT', 0, 200)
for i = 1, #expired, 2 do
  local id, acked = expired[i], tonumber(expired[i + 1]) % 2 == 1
  local jk = jobPrefix .. id
  if redis.call('EXISTS', jk) == 1 then
    local f = redis.call('HMGET', jk, 'finishedOn', 'returnvalue', 'failedReason')
    if not f[1] then
      redis.call('ZADD', kLeases, delivered, id)
    else
      local outcome = 'f'
      if f[2] then
        outcome = 'c'
      elseif f[3] and string.sub(f[3], 1, 11) == '[cancelled:' then
        outcome = 'x'
      end
      released[#released + 1] = id
      released[#released + 1] = outcome
    end
  elseif not acked then
    -- Admitted but never handed to BullMQ (its sender died): send it again, same job id.
    local v = redis.call('HGET', kJobs, id)
    local json = v and jobJson(v)
    if v and not json then
      -- An entry the gate cannot read: failed with the reason, record and lease dropped.
      failInBull(id, UNREADABLE, '', '{}', '{"attempts":1}', now)
      redis.call('HDEL', kJobs, id)
      redis.call('ZREM', kLeases, id)
    elseif v then
      redis.call('ZADD', kLeases, transit, id)
      out[#out + 1] = id
      out[#out + 1] = json
      if #LANES > 1 then out[#out + 1] = 2 else out[#out + 1] = 0 end
    else
      redis.call('ZREM', kLeases, id)
    end
  else
    -- BullMQ ran it and removed it, and no release reached the gate.
    released[#released + 1] = id
    released[#released + 1] = 'c'
  end
end
releaseMany(released, now, slowCfg, touched, events)

if slowCfg.threshold > 0 then
  for _, t in ipairs(redis.call('SRANDMEMBER', kSlow, 100)) do checkRecovery(t, now, slowCfg, events) end
end
for t in pairs(touched) do activate(t) end
if BG then budgetRecheck(loadTenants, activate) end
for _, v in ipairs(dispatch(tonumber(ARGV[2]), now)) do out[#out + 1] = v end
flushTenants(now)
floorsReport(events)
return {events, out, nextWake(now), budgetWoken()}
