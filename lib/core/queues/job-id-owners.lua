--[[
  Owners of caller-chosen job ids. The first tenant to use an id on a queue owns it, so another
  tenant's add with that id is refused instead of being dropped by BullMQ's duplicate check
  (which reports success and hands back the other tenant's job). An id with no owner key yet
  (expired, or written before this ledger) is owned by the tenant of BullMQ's job of that id (a
  job waiting in a fair gate is a BullMQ job too). All ids of a call are checked before any is claimed.
  An owner key's value is its owner ('t' .. tenant id, or 's' for a job without tenant); a key
  this ledger creates holds 'T' or 'S', then the creating call's 16-character token, then the
  rest, so a call that is refused later releases exactly the keys it created
  (job-id-release.lua) and never another call's.
  KEYS[i]      owner key of id i
  KEYS[n+i]    BullMQ's job hash of id i
  ARGV[1]      time to keep each owner key, in ms
  ARGV[2]      envelope key of the job data ('_tenant')
  ARGV[3]      the call's token (16 characters)
  ARGV[3+i]    owner of id i ('t' .. tenant id, or 's' for a job without tenant)
  Returns 0 with every id claimed (keys created or their time renewed), or the 1-based index of
  the first id another owner holds (nothing claimed).
]]
local n = #KEYS / 2
local token = ARGV[3]

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

-- The owner in a key's value (with or without its creating call's token).
local function ownerOfValue(value)
  local head = string.sub(value, 1, 1)
  if head == 'T' or head == 'S' then return string.lower(head) .. string.sub(value, 18) end
  return value
end

local seen = {}
local exists = {}
for i = 1, n do
  local key = KEYS[i]
  local want = ARGV[3 + i]
  local have = seen[key]
  if not have then
    local value = redis.call('GET', key)
    if value then
      have = ownerOfValue(value)
      exists[key] = true
    else
      local data = redis.call('HGET', KEYS[n + i], 'data')
      if data then have = ownerOfData(data) end
    end
  end
  if have and have ~= want then return i end
  seen[key] = want
end
for i = 1, n do
  local key = KEYS[i]
  if exists[key] then
    redis.call('PEXPIRE', key, ARGV[1])
  elseif exists[key] == nil then
    local want = ARGV[3 + i]
    redis.call('SET', key, string.upper(string.sub(want, 1, 1)) .. token .. string.sub(want, 2),
      'PX', ARGV[1])
    exists[key] = false
  end
end
return 0
