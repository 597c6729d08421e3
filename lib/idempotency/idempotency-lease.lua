--[[
  Renews or releases a run's claim, only while this attempt still holds it.
  KEYS[1] claim         ({<prefix>:<queue>}:~run:<tenant>:<runId>:claim)
  ARGV[1] claim token
  ARGV[2] 'renew' or 'release'
  ARGV[3] lease in ms (renew)
  Returns 1 when held, 0 otherwise.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == 'renew' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
