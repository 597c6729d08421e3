--[[
  Records a job's final failure in its tenant's dead letters, once per failure.
  KEYS[1] BullMQ job hash     ({<prefix>:<queue>}:<queue>:<jobId>)
  KEYS[2] BullMQ failed set   ({<prefix>:<queue>}:<queue>:failed)
  KEYS[3] tenant index        ({<prefix>:<queue>}:~dlq:<tenantKeyPart>), zset jobId -> failedAt ms
  KEYS[4] tenant entries      ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:entries), hash jobId -> JSON
  KEYS[5] tenant resolutions  ({<prefix>:<queue>}:~dlq:<tenantKeyPart>:resolved), hash jobId -> ms
  KEYS[6] open letters        ({<prefix>:<queue>}:~dlq-open), hash jobId -> tenant id, the letters
                              whose job may still complete by another path (job.retry(), bull-board)
  ARGV[1] job id
  ARGV[2] finishedOn of the failure (ms), the identity of this failure
  ARGV[3] dead letter JSON
  ARGV[4] cap of entries per tenant
  ARGV[5] '1' when the caller saw the final failure itself, '0' to check the failed set
  ARGV[6] tenant id
  Returns 1 when recorded now, 0 when already recorded, -1 when the job is not failed for good.
]]
if ARGV[5] ~= '1' and not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return -1
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'tqDlq') == ARGV[2] then
    return 0
  end
  redis.call('HSET', KEYS[1], 'tqDlq', ARGV[2])
  redis.call('HSET', KEYS[6], ARGV[1], ARGV[6])
elseif redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
local over = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[4])
if over > 0 then
  local oldest = redis.call('ZRANGE', KEYS[3], 0, over - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, over - 1)
  for i = 1, #oldest, 1000 do
    local chunk = { unpack(oldest, i, math.min(i + 999, #oldest)) }
    redis.call('HDEL', KEYS[4], unpack(chunk))
    redis.call('HDEL', KEYS[5], unpack(chunk))
    redis.call('HDEL', KEYS[6], unpack(chunk))
  end
end
return 1
