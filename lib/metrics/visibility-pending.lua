--[[
  Records jobs waiting to start, skipping those some process already saw start.
  KEYS[1]      sorted set of started job ids (VisibilityKeys.started)
  KEYS[2..n]   the pending sorted set of each job's tenant (VisibilityKeys.pending)
  ARGV         for each job: job id, ready time (ms); in the order of KEYS[2..n]
  Returns the number of jobs recorded.
]]
local added = 0
for i = 2, #KEYS do
  local id = ARGV[(i - 2) * 2 + 1]
  if not redis.call('ZSCORE', KEYS[1], id) then
    added = added + redis.call('ZADD', KEYS[i], ARGV[(i - 2) * 2 + 2], id)
  end
end
return added
