--[[
  Read only: where one job stands in the fair gate, for TenantQueueInspector.explain.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  job id
  Returns {'none'} when the gate does not hold the job;
  {'admitted', tenant, acked (1 once BullMQ has it, 0 in transit)} when it was handed to BullMQ;
  {'gate', tenant, lane, position (0 = next; with fair keys, among all the tenant's jobs in the
   lane in its keys' turns), backlog length, turn rank (-1 = not in turn),
   tenants in turn, limited until (ms, -1 = none), now, weight, cap, in flight, paused (0/1),
   slow (0/1), window, leases, lane p1, worker slots, lane index (1-based), earlier lanes with work}.
  Writes nothing.
]]
local id = ARGV[2]
local v = redis.call('HGET', kJobs, id)
if not v then return {'none'} end
local t = jobTenant(v)
local lease = redis.call('ZSCORE', kLeases, id)
if lease then return {'admitted', t, tonumber(lease) % 2} end
local h = redis.call('HMGET', tKey(t), 'w', 'dw', 'cap', 'dcap', 'paused', 'slow')
local inflight = tonumber(redis.call('HGET', kInf, t)) or 0
local lane, laneAt, pos, size = '', 1, -1, 0
for i, l in ipairs(LANES) do
  local p = redis.call('LPOS', qKey(t, l), id)
  if p then
    lane, laneAt, pos, size = l, i, p, redis.call('LLEN', qKey(t, l))
    break
  end
end
if cfg.fk then
  -- The job's key, as the gate took it (fair-key.ts): the envelope's fairKey, else with 'actor'
  -- its actor id. Under keys, its position counts the turns of the tenant's other keys too.
  local ok, job = pcall(cjson.decode, jobJson(v))
  local env = ok and type(job) == 'table' and type(job.d) == 'table' and job.d._tenant
  local key = ''
  if type(env) == 'table' then
    if type(env.fairKey) == 'string' then
      key = env.fairKey
    elseif cfg.fk == 'actor' and type(env.actorId) == 'string' then
      key = env.actorId
    end
  end
  if pos < 0 and key ~= '' then
    for i, l in ipairs(LANES) do
      local p = redis.call('LPOS', kqKey(t, key, l), id)
      if p then
        lane, laneAt, pos = l, i, p
        break
      end
    end
  else
    key = ''
  end
  local r = tenant(t)
  if pos >= 0 and keyedLen(r, lane) > 0 then
    pos, size = keyedPosition(t, r, lane, key, pos), len(r, lane)
  end
end
local rank = redis.call('ZRANK', rKey(lane), t)
local inTurn = redis.call('ZCARD', rKey(lane))
local limited = redis.call('ZSCORE', kLimited, t)
local state = redis.call('HMGET', kState, 'window', 'p1:' .. lane, 'slots')
local win = cfg.win
if win <= 0 then win = tonumber(state[1]) or cfg.minWin end
local earlier = 0
for i = 1, laneAt - 1 do
  if redis.call('ZCARD', rKey(LANES[i])) > 0 then earlier = earlier + 1 end
end
return {'gate', t, lane, pos, size, rank or -1, inTurn, limited or -1, fmt(nowMs()),
        h[1] or h[2] or fmt(cfg.dw), tonumber(h[3]) or tonumber(h[4]) or cfg.dcap,
        inflight, h[5] == '1' and 1 or 0, h[6] == '1' and 1 or 0, win,
        redis.call('ZCARD', kLeases), tonumber(state[2]) or 0, tonumber(state[3]) or 0, laneAt,
        earlier}
