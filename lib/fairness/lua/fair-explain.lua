--- @include "fair-keys"
--- @include "../modes/fair-keys/fair-fairkey"
--- @include "fair-bull"
--[[
  Read only: where one job stands in the fair gate, for TenantQueueInspector.explain.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  job id
  Returns {'none'} when the gate does not hold the job;
  {'admitted', tenant, 1} when the gate admitted it (BullMQ's wait list, prioritized set, or running);
  {'gate', tenant, lane, position (0 = next; with fair keys, among all the tenant's jobs in the
   lane in its keys' turns), backlog length, turn rank (-1 = not in turn),
   tenants in turn, limited until (ms, -1 = none), now, weight, cap, in flight, paused (0/1),
   slow (0/1), window, leases, lane p1, worker slots, lane index (1-based), earlier lanes with work}.
  Writes nothing.
]]
local id = ARGV[2]
local v = redis.call('HGET', kJobs, id)
local t = v and jobTenant(v)
if t and redis.call('ZSCORE', kLeases, id) then return {'admitted', t, 1} end
-- A job waiting in the gate is held in BullMQ's delayed set (fair-bull.lua); its tenant is the
-- one its envelope names (the system bucket without one), if it sits in that tenant's backlog.
if not isHeld(redis.call('ZSCORE', cfg.jp .. 'delayed', id)) then return {'none'} end
local ok, data = pcall(cjson.decode, redis.call('HGET', cfg.jp .. id, 'data') or '{}')
local envelope = ok and type(data) == 'table' and data._tenant
t = cfg.sys
if type(envelope) == 'table' and type(envelope.tenantId) == 'string' then t = envelope.tenantId end
local h = redis.call('HMGET', tKey(t), 'w', 'dw', 'cap', 'dcap', 'paused', 'slow')
local inflight = tonumber(redis.call('HGET', kInf, t)) or 0
local lane, laneAt, pos, size = '', 1, -1, 0
-- With fair keys the backlog is in its keys' turns already (fair-fairkey.lua): the job's rank.
for i, l in ipairs(LANES) do
  local p = backlogPosition(t, l, id)
  if p then
    lane, laneAt, pos, size = l, i, p, backlogLength(t, l)
    break
  end
end
if pos < 0 then return {'none'} end
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
