--[[
  Takes over outbox entries whose lease ran out (their claimer crashed before enqueueing): each
  is leased again to the caller, so only one process re-sends it per lease period.

  KEYS[1] outbox (sorted set: "<schedule id>|<occurrence spec>" -> lease deadline, epoch ms)

  ARGV[1] now (epoch ms)
  ARGV[2] new lease deadline (epoch ms)
  ARGV[3] most entries to take

  Returns the members taken over.
]]
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(stale) do
  redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member)
end
return stale
