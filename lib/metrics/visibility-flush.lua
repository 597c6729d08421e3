--[[
  One chunk of a queue's visibility flush (QueueVisibility.flush): the counters each tenant's
  record gathered since the last flush, added in one call. Each HINCRBY is the one a pipelined
  command would send, so any number of processes add to the same fields; the call only saves
  Node the building and answering of a command per field (~3 µs each, per tenant written). A
  tenant-minute hash gets its TTL when this call makes it, and not again.
  KEYS[1]  totals hash (VisibilityKeys.totals)   KEYS[2]  tenants zset (VisibilityKeys.tenants)
  KEYS[3]  the writer's last applied call number (VisibilityKeys.flushed)
  KEYS[4]  reconcile hash (VisibilityKeys.reconcile): a tenant idle for a day leaves it too
  ARGV[1]  time to live of the tenant-minute hashes (s)
  ARGV[2]  tenants whose last activity is older leave the zset (ms), with their totals where
           they show no backlog; '' = not in this chunk
  ARGV[3]  this call's number, rising with each call of the writer
  ARGV[4..] per tenant: last activity (ms), tenant, enqueued field, jobs enqueued, started
           field, first starts, number of minutes m; then per minute: its hash's key, the number
           of pairs n, then n pairs of field and count (only non-zero counts, n >= 1)
  Every key names the queue's hash tag: one Cluster slot.
  Returns the number of tenants written (0 for a call applied already).
]]
local totals, tenants = KEYS[1], KEYS[2]
local IDLE_BATCH = 1000
-- A call sent again after its reply was lost (ioredis resends what Redis had not answered when
-- the connection dropped) adds nothing: the writer's calls are numbered, each applied once.
local call = tonumber(ARGV[3])
if call <= (tonumber(redis.call('GET', KEYS[3])) or 0) then return 0 end
redis.call('SET', KEYS[3], call, 'EX', 86400)
local ttl = ARGV[1]
local seen = {}
local i = 4
while i <= #ARGV do
  seen[#seen + 1] = ARGV[i]
  seen[#seen + 1] = ARGV[i + 1]
  if ARGV[i + 3] ~= '0' then redis.call('HINCRBY', totals, ARGV[i + 2], ARGV[i + 3]) end
  if ARGV[i + 5] ~= '0' then redis.call('HINCRBY', totals, ARGV[i + 4], ARGV[i + 5]) end
  local minutes = tonumber(ARGV[i + 6])
  i = i + 7
  for _ = 1, minutes do
    local key, n = ARGV[i], tonumber(ARGV[i + 1])
    local fresh = false
    for p = i + 2, i + 2 * n, 2 do
      local count = ARGV[p + 1]
      if redis.call('HINCRBY', key, ARGV[p], count) == tonumber(count) then fresh = true end
    end
    -- Only this script writes tenant-minute hashes, and it sets the TTL in the call that makes
    -- one (every field new then): a field that was there already means the hash was, with its
    -- TTL. A tenant written on most flushes (one job each at 100,000 tenants) sends no EXPIRE.
    if fresh then redis.call('EXPIRE', key, ttl) end
    i = i + 2 + 2 * n
  end
end
-- At most 500 tenants a call (QueueVisibility's FLUSH_CHUNK): one ZADD takes them all.
if #seen > 0 then redis.call('ZADD', tenants, unpack(seen)) end
-- Tenants idle for a day leave the zset, up to IDLE_BATCH a call (the next calls take the rest),
-- and their totals go with them where nothing is left waiting: enqueued = started gives a
-- backlog of 0 with the fields or without, and a count a process adds later starts from 0, so
-- every difference stays the same. Without this the hash kept 2 fields for every tenant that
-- ever had a job. Their reconcile views go too (a view left when the counters agreed again is
-- never read back: without this the reconcile hash kept one for many tenants ever seen).
if ARGV[2] ~= '' then
  local idle = redis.call('ZRANGEBYSCORE', tenants, '-inf', ARGV[2], 'LIMIT', 0, IDLE_BATCH)
  if #idle > 0 then
    local fields = {}
    for _, t in ipairs(idle) do
      fields[#fields + 1] = t .. '|enq'
      fields[#fields + 1] = t .. '|started'
    end
    local counts = redis.call('HMGET', totals, unpack(fields))
    local done = {}
    for k = 1, #fields, 2 do
      if (tonumber(counts[k]) or 0) == (tonumber(counts[k + 1]) or 0) then
        done[#done + 1] = fields[k]
        done[#done + 1] = fields[k + 1]
      end
    end
    if #done > 0 then redis.call('HDEL', totals, unpack(done)) end
    redis.call('HDEL', KEYS[4], unpack(idle))
    redis.call('ZREM', tenants, unpack(idle))
  end
end
return #seen / 2
