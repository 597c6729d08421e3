--[[
  Acknowledges jobs that reached BullMQ: they leave the in-transit record (their leases stay).
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, unused here but parsed by the prelude)
  ARGV[2..] job ids
]]
for i = 2, #ARGV do
  if redis.call('ZREM', kTransit, ARGV[i]) == 1 then redis.call('HDEL', kData, ARGV[i]) end
end
return 0
