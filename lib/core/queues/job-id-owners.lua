--[[
  Owners of caller-chosen job ids. The first tenant to use an id on a queue owns it, so another
  tenant's add with that id is refused instead of being dropped by BullMQ's duplicate check
  (which reports success and hands back the other tenant's job). An id with no owner key yet
  (expired, or written before this ledger) is owned by whoever holds it in the fair gate's job
  index or in BullMQ's job hash. All ids of a call are checked before any is claimed.
  KEYS[1]      the fair gate's job index of the queue (absent when fairness is off)
  KEYS[1+i]    owner key of id i
  KEYS[1+n+i]  BullMQ's job hash of id i
  ARGV[1]      time to keep each owner key, in ms
  ARGV[2]      envelope key of the job data ('_tenant')
  ARGV[3]      the gate's bucket of jobs without tenant (SYSTEM_BUCKET)
  ARGV[3+i]    owner of id i ('t' .. tenant id, or 's' for a job without tenant)
  ARGV[3+n+i]  id i
  Returns 0 with every id claimed, or the 1-based index of the first id another owner holds
  (nothing claimed).
]]
local n = (#KEYS - 1) / 2

local function ownerOfData(data)
  local ok, decoded = pcall(cjson.decode, data)
  if not ok or type(decoded) ~= 'table' then return '?' end
  local envelope = decoded[ARGV[2]]
  if envelope == nil then return 's' end
  if type(envelope) == 'table' and type(envelope.tenantId) == 'string' then
    return 't' .. envelope.tenantId
  end
  return '?'
end

local seen = {}
for i = 1, n do
  local key = KEYS[1 + i]
  local want = ARGV[3 + i]
  local have = seen[key] or redis.call('GET', key)
  if not have then
    local gated = redis.call('HGET', KEYS[1], ARGV[3 + n + i])
    if gated then
      have = (gated == ARGV[3]) and 's' or ('t' .. gated)
    else
      local data = redis.call('HGET', KEYS[1 + n + i], 'data')
      if data then have = ownerOfData(data) end
    end
  end
  if have and have ~= want then return i end
  seen[key] = want
end
for i = 1, n do
  redis.call('SET', KEYS[1 + i], ARGV[3 + i], 'PX', ARGV[1])
end
return 0
