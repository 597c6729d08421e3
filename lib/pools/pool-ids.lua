--[[
  Sticky pools of caller-chosen job ids: the first pool a job id was routed to keeps it for a
  while, so a repeat of the id (a retried fan-out, a recovered schedule) after the tenant moved
  lands on the pool that may still hold the first copy, where BullMQ's id check drops it.
  A key holds '<pool> <owner>'. The id ledger gives an id one owner at a time, so a key of
  another owner is stale (its call was refused, or its claim expired): the new owner's pool
  replaces it, and no tenant's job follows another tenant's id into that tenant's pool. A key
  written before owners were kept ('<pool>' alone) holds for anyone.
  KEYS[i]     the id's key (under the queue's hash tag)
  ARGV[1]     time to keep each key, in ms
  ARGV[1+i]   the pool routing picked for KEYS[i]
  ARGV[1+n+i] owner of id i ('t' .. tenant id, or 's' for a job without tenant)
  Returns the pool of each id: the one picked now, or the one that took it first.
]]
local n = #KEYS
local out = {}
for i, key in ipairs(KEYS) do
  local pool = ARGV[i + 1]
  local owner = ARGV[1 + n + i]
  local have = redis.call('GET', key)
  local at = have and string.find(have, ' ', 1, true)
  if have and (not at or string.sub(have, at + 1) == owner) then
    out[i] = at and string.sub(have, 1, at - 1) or have
  else
    redis.call('SET', key, pool .. ' ' .. owner, 'PX', ARGV[1])
    out[i] = pool
  end
end
return out
