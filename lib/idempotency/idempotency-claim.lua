--[[
  Claims a run for one attempt, unless the run already completed.
  KEYS[1] done marker   ({<prefix>:<queue>}:~run:<tenant>:<runId>:done)
  KEYS[2] claim         ({<prefix>:<queue>}:~run:<tenant>:<runId>:claim)
  ARGV[1] claim token (one per attempt)
  ARGV[2] lease in ms
  Returns {1, result} when already done, {2, pttl} when another attempt holds the claim,
  {0} when claimed.
]]
local done = redis.call('GET', KEYS[1])
if done then
  return {1, done}
end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then
  return {2, redis.call('PTTL', KEYS[2])}
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {0}
