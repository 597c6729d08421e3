--[[
  Claims due schedule occurrences: compare-and-set of each schedule's stored next run. A claim
  that wins moves the schedule to its next run (or out of the due index) and records what must
  be enqueued in the outbox, leased until ARGV[1]; the caller enqueues, then removes the entries.

  KEYS[1] due index (sorted set: schedule id -> next run, epoch ms)
  KEYS[2] outbox (sorted set: "<schedule id>|<occurrence spec>" -> lease deadline, epoch ms)

  ARGV[1] lease deadline (epoch ms)
  ARGV[2] number of entries N, then N groups of 4:
          schedule id, expected next run, new next run ("" = leave the due index),
          outbox members joined by "\n" ("" = none)

  Returns a table of N integers: 1 claimed, 0 lost (another process claimed it, or it changed).
]]
local lease = ARGV[1]
local n = tonumber(ARGV[2])
local result = {}
for i = 0, n - 1 do
  local base = 3 + i * 4
  local id = ARGV[base]
  local current = redis.call('ZSCORE', KEYS[1], id)
  if current and tonumber(current) == tonumber(ARGV[base + 1]) then
    if ARGV[base + 2] == '' then
      redis.call('ZREM', KEYS[1], id)
    else
      redis.call('ZADD', KEYS[1], ARGV[base + 2], id)
    end
    local members = ARGV[base + 3]
    if members ~= '' then
      for member in string.gmatch(members, '[^\n]+') do
        redis.call('ZADD', KEYS[2], lease, member)
      end
    end
    result[i + 1] = 1
  else
    result[i + 1] = 0
  end
end
return result
