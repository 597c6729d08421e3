--[[
  Shared prelude of every fair-gate script (prepended at load time; not a command itself).
  KEYS[1]  gate base key  {<prefix>:<queue>}:fair  (every key below derives from it: one slot)
  ARGV[1]  gate config, JSON: dw (default weight), dcap (default cap, 0 = none), k (max in a row),
           win (fixed window, 0 = auto), minWin, lease (ms), slowShare, batch
  Keys: :ready zset tenant->pass | :state hash vt,last,streak,window | :leases zset id->expiry
        :transit zset id->sent at | :jobs hash id->tenant | :data hash id->job json
        :slow set | :t:<tenant> hash w,dw,cap,dcap,inf,paused,slow,pass | :q:<tenant> list of ids
        :f:<tenant> zset of failures (score = time)
]]
local base = KEYS[1]
local cfg = cjson.decode(ARGV[1])
local kReady = base .. ':ready'
local kState = base .. ':state'
local kLeases = base .. ':leases'
local kTransit = base .. ':transit'
local kJobs = base .. ':jobs'
local kData = base .. ':data'
local kSlow = base .. ':slow'
local function tKey(t) return base .. ':t:' .. t end
local function qKey(t) return base .. ':q:' .. t end
local function fKey(t) return base .. ':f:' .. t end

-- Lua numbers lose digits through redis.call's default conversion: format them ourselves.
local function fmt(n) return string.format('%.17g', n) end

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local TFIELDS = {'w', 'dw', 'cap', 'dcap', 'inf', 'paused', 'slow', 'pass'}

local function loadTenant(t)
  local r = redis.call('HMGET', tKey(t), unpack(TFIELDS))
  local w = tonumber(r[1]) or tonumber(r[2]) or cfg.dw
  if r[7] == '1' then w = w * cfg.slowShare end
  local cap = tonumber(r[3]) or tonumber(r[4]) or cfg.dcap
  return { w = w, cap = cap, inf = tonumber(r[5]) or 0, paused = r[6] == '1',
           slow = r[7] == '1', pass = tonumber(r[8]) or 0 }
end

-- Puts a tenant back in turn if it has work, is not paused and is under its cap. A tenant that
-- wakes up starts at the current virtual time: idleness earns no credit.
local function activate(t)
  if redis.call('ZSCORE', kReady, t) then return end
  local r = loadTenant(t)
  if r.paused or (r.cap > 0 and r.inf >= r.cap) then return end
  if redis.call('LLEN', qKey(t)) == 0 then return end
  local vt = tonumber(redis.call('HGET', kState, 'vt')) or 0
  local pass = r.pass
  if pass < vt then pass = vt end
  redis.call('ZADD', kReady, fmt(pass), t)
end

-- Picks up to maxN jobs in fair order (lowest pass first, at most k of one tenant in a row while
-- another is ready, skipping tenants at their cap) and leases them. Returns {id, json, ...}.
local function dispatch(maxN, now)
  local st = redis.call('HMGET', kState, 'vt', 'last', 'streak', 'window')
  local vt = tonumber(st[1]) or 0
  local last = st[2] or ''
  local streak = tonumber(st[3]) or 0
  local win = cfg.win
  if win <= 0 then win = tonumber(st[4]) or cfg.minWin end
  local room = win - redis.call('ZCARD', kLeases)
  if room > maxN then room = maxN end
  local out = {}
  local guard = 0
  while room > 0 and guard < 4 * maxN + 16 do
    guard = guard + 1
    local top = redis.call('ZRANGE', kReady, 0, 1, 'WITHSCORES')
    if #top == 0 then break end
    local t, pass = top[1], tonumber(top[2])
    if t == last and streak >= cfg.k and #top >= 4 then
      t, pass = top[3], tonumber(top[4])
    end
    local r = loadTenant(t)
    if r.paused or (r.cap > 0 and r.inf >= r.cap) then
      redis.call('ZREM', kReady, t)
    else
      local id = redis.call('LPOP', qKey(t))
      if not id then
        redis.call('ZREM', kReady, t)
      else
        local payload = redis.call('HGET', kData, id)
        if not payload then
          redis.call('HDEL', kJobs, id)
        else
          local inf = r.inf + 1
          local nextPass = pass + 1 / r.w
          redis.call('HSET', tKey(t), 'inf', inf, 'pass', fmt(nextPass))
          redis.call('ZADD', kLeases, now + cfg.lease, id)
          redis.call('ZADD', kTransit, now, id)
          out[#out + 1] = id
          out[#out + 1] = payload
          if pass > vt then vt = pass end
          if t == last then streak = streak + 1 else last = t; streak = 1 end
          room = room - 1
          if (r.cap > 0 and inf >= r.cap) or redis.call('LLEN', qKey(t)) == 0 then
            redis.call('ZREM', kReady, t)
          else
            redis.call('ZADD', kReady, fmt(nextPass), t)
          end
        end
      end
    end
  end
  if #out > 0 then
    redis.call('HSET', kState, 'vt', fmt(vt), 'last', last, 'streak', streak)
  end
  return out
end

-- Frees one job's slot. outcome: c completed, f failed for good, x cancelled (no slow-lane count).
local function releaseOne(id, outcome, now, slowCfg, touched, events)
  local t = redis.call('HGET', kJobs, id)
  if not t then return end
  redis.call('HDEL', kJobs, id)
  redis.call('HDEL', kData, id)
  redis.call('ZREM', kLeases, id)
  redis.call('ZREM', kTransit, id)
  local inf = redis.call('HINCRBY', tKey(t), 'inf', -1)
  if inf <= 0 and redis.call('LLEN', qKey(t)) == 0 then
    -- Idle: drop the run-time fields, so a drained tenant leaves no key behind (a tenant that
    -- wakes up starts at the current virtual time anyway). Overrides and hints stay.
    redis.call('HDEL', tKey(t), 'inf', 'pass')
  elseif inf < 0 then
    redis.call('HSET', tKey(t), 'inf', 0)
  end
  if outcome == 'f' and slowCfg.threshold > 0 then
    local fk = fKey(t)
    redis.call('ZADD', fk, now, id .. '@' .. now)
    redis.call('ZREMRANGEBYSCORE', fk, '-inf', now - slowCfg.window)
    redis.call('PEXPIRE', fk, slowCfg.window)
    local count = redis.call('ZCARD', fk)
    if count >= slowCfg.threshold and redis.call('HGET', tKey(t), 'slow') ~= '1' then
      redis.call('HSET', tKey(t), 'slow', 1)
      redis.call('SADD', kSlow, t)
      events[#events + 1] = 'enter'
      events[#events + 1] = t
      events[#events + 1] = count
    end
  end
  touched[t] = true
end

-- Leaves the slow lane once failures in the window fall to the recovery level.
local function checkRecovery(t, now, slowCfg, events)
  if redis.call('HGET', tKey(t), 'slow') ~= '1' then
    redis.call('SREM', kSlow, t)
    return
  end
  local fk = fKey(t)
  redis.call('ZREMRANGEBYSCORE', fk, '-inf', now - slowCfg.window)
  local count = redis.call('ZCARD', fk)
  if count <= slowCfg.recoverAt then
    redis.call('HDEL', tKey(t), 'slow')
    redis.call('SREM', kSlow, t)
    events[#events + 1] = 'leave'
    events[#events + 1] = t
    events[#events + 1] = count
  end
end
