--[[
  Resolves an open dead letter whose job completed by another path than a replay (BullMQ's
  job.retry(), bull-board's Retry, then any worker).
  KEYS[1] BullMQ job hash     ({<prefix>:<queue>}:<queue>:<jobId>)
  KEYS[2] BullMQ completed set ({<prefix>:<queue>}:<queue>:completed)
  KEYS[3] tenant entries      ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:entries)
  KEYS[4] tenant resolutions  ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:resolved)
  KEYS[5] open letters        ({<prefix>:<queue>}:~dlq-open)
  ARGV[1] job id
  ARGV[2] tenant id (the open entry must name it)
  ARGV[3] now (ms)
  ARGV[4] '1' when the caller saw the job complete (its hash may be gone: removeOnComplete)
  Returns 1 when resolved now, 0 when still open, -1 when it is watched no more.
]]
if redis.call('HGET', KEYS[5], ARGV[1]) ~= ARGV[2] then
  return -1
end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 0 then
  redis.call('HDEL', KEYS[5], ARGV[1])
  return -1
end
if ARGV[4] == '1' or redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
  redis.call('HDEL', KEYS[5], ARGV[1])
  return 1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  -- Removed with no sign of completion (removeOnFail, a manual remove): the letter stays open.
  redis.call('HDEL', KEYS[5], ARGV[1])
  return -1
end
return 0
