--[[
  Records a completed run and drops its claim, in one step.
  KEYS[1] done marker   ({<prefix>:<queue>}:~run:<tenant>:<runId>:done)
  KEYS[2] claim         ({<prefix>:<queue>}:~run:<tenant>:<runId>:claim)
  ARGV[1] claim token
  ARGV[2] ttl of the marker in ms
  ARGV[3] the run's result (JSON)
  Returns 1.
]]
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
end
return 1
