--[[
  Reads or changes one tenant's fairness state, then dispatches what became possible.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-common.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  tenant
  ARGV[4]  operation: get | weight | cap | pause | resume
  ARGV[5]  value for weight/cap ('' clears the runtime override)
  get returns {w, dw, cap, dcap, inf, paused, slow, backlog, failures};
  the others return {{}, {id, json, ...}}.
]]
local t, op, value = ARGV[3], ARGV[4], ARGV[5]
if op == 'get' then
  local r = redis.call('HMGET', tKey(t), unpack(TFIELDS))
  return {r[1], r[2], r[3], r[4], r[5], r[6], r[7], redis.call('LLEN', qKey(t)),
          redis.call('ZCARD', fKey(t))}
end
if op == 'weight' or op == 'cap' then
  local field = op == 'weight' and 'w' or 'cap'
  if value == '' then redis.call('HDEL', tKey(t), field) else redis.call('HSET', tKey(t), field, value) end
elseif op == 'pause' then
  redis.call('HSET', tKey(t), 'paused', 1)
  redis.call('ZREM', kReady, t)
elseif op == 'resume' then
  redis.call('HDEL', tKey(t), 'paused')
end
local r = loadTenant(t)
if r.cap > 0 and r.inf >= r.cap then redis.call('ZREM', kReady, t) else activate(t) end
return {{}, dispatch(tonumber(ARGV[2]), nowMs())}
