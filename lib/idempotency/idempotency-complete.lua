--[[
  Records a completed run and drops its claim, in one step: while this attempt holds the claim,
  or, when nobody does and no result is recorded, a timed-out attempt that returned before its
  retry claimed the run (its work happened). Never over another attempt's claim or result.
  KEYS[1] done marker   ({<prefix>:<queue>}:~run:<tenant>:<runId>:done)
  KEYS[2] claim         ({<prefix>:<queue>}:~run:<tenant>:<runId>:claim)
  ARGV[1] claim token
  ARGV[2] ttl of the marker in ms
  ARGV[3] the run's result (JSON)
  Returns 1 when the result was recorded, 0 when another attempt holds the run or recorded one.
]]
local holder = redis.call('GET', KEYS[2])
if holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
  redis.call('DEL', KEYS[2])
  return 1
end
if not holder and redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2], 'NX') then
  return 1
end
return 0
