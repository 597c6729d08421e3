--- @include "@core/tenant-key"
--[[
  The fair gate's keys and helpers, the first part of every fair-gate script (after tkp(t),
  @core/tenant-key). Each file names the parts it uses in `--- @include` lines at its top, and
  each command is composed from its own file and those (composeLua, lib/core/redis/lua-includes.ts:
  each part once, after the parts it includes); none of the parts is a command itself.
  KEYS[1]  gate base key  {<prefix>:<queue>}:~fair  (every key below derives from it: one slot)
  ARGV[1]  gate config, JSON: dw (default weight), dcap (default cap, 0 = none), dmin (default
           floor, absent = none), k (max in a row),
           win (fixed window, 0 = auto), minWin, lease (ms), chk (ms between two checks of an
           admitted job in BullMQ, see fair-tick.lua), sys (the system bucket), pl, pr
           (fair-bull.lua), slowShare, rl (default rate limit "T:tol:max:per:burst", T and tol in
           ms, absent = none), lanes (lane names, priority order; absent = one lane ''),
           tp (true: priority by turn, see dispatch), dt (true: turns at add, fair-turns.lua),
           shares (reserved share of the window per lane),
           fk ('job' | 'actor': fair keys inside a tenant, see fair-fairkey.lua; absent = none),
           jp (BullMQ's job key prefix {<prefix>:<queue>}:<queue>:, for its finished sets)
  Keys: :ready[:<lane>] zset tenant->pass | :state hash vt,last,streak[,:<lane>], p1:<lane>,
        window, slots (live workers' total concurrency)
        :leases zset id->time of its next check (admitted jobs) | :jobs hash
        id->'{"n":<name>}\n<tenant>' (the job itself is BullMQ's, held in its delayed set until
        admitted, see fair-bull.lua) | :seen zset id->first seen running unadmitted
        :lane hash id->lane of jobs admitted within their lane's share | :p2:<lane> list of
        the lane's jobs admitted beyond its share, oldest first (see dispatch) | :slow set
        :limited zset tenant->ms when its rate limit lets the next job start
        Run-time state of every tenant, one hash per field for the whole gate (so a call reads
        and writes it for all its tenants with one command each; the field is the tenant id):
        :inf tenant->jobs admitted and not released | :pass[:<lane>] tenant->pass in the lane
        | :tat tenant->GCRA theoretical arrival time (ms, rate-limited tenants only)
        | :bl[:<lane>] tenant->length of its backlog list in the lane (absent = empty)
        :conf set of the tenants that have settings (a :t: hash), so no other tenant costs a read
        :t:<tkp(tenant)> hash of settings: w,cap,rl,min (run-time overrides),
        dw,dcap,drl,dlanes,dmin (directory/tier hints), paused, slow
        :below set, :floors hash: floors (minConcurrency), see fair-floor.lua
        :q:<tkp(tenant)>[:<lane>] list of ids | :f:<tkp(tenant)> zset of failures (score = time)
        :lv, :d:<tkp(tenant)>, :dl (priority by turn, fair-turns.lua)
        with fair keys a tenant's backlog is a zset instead, :kz:, beside :kt: and :kv (fair-fairkey.lua)
  Every script call reads the state of the tenants it touches in one batch (loadTenants), works
  on that copy, and writes it back once at the end (flushTenants); multi-element writes are
  variadic, in chunks under unpack's limit.
]]
local base = KEYS[1]
local cfg = cjson.decode(ARGV[1])
local kState = base .. ':state'
local kLeases = base .. ':leases'
local kJobs = base .. ':jobs'
local kSlow = base .. ':slow'
local kLimited = base .. ':limited'
local kLaneOf = base .. ':lane'
local kInf = base .. ':inf'
local kTat = base .. ':tat'  -- (a budget's shared hash instead, see fair-budget.lua)
local kConf = base .. ':conf'
local LANES = cfg.lanes or {''}
local CHUNK = 4000
local function tKey(t) return base .. ':t:' .. tkp(t) end
local function fKey(t) return base .. ':f:' .. tkp(t) end
local function rKey(l)
  if l == '' then return base .. ':ready' end
  return base .. ':ready:' .. l
end
local function pKey(l)
  if l == '' then return base .. ':pass' end
  return base .. ':pass:' .. l
end
local function bKey(l)
  if l == '' then return base .. ':bl' end
  return base .. ':bl:' .. l
end
local function qKey(t, l)
  if l == nil or l == '' then return base .. ':q:' .. tkp(t) end
  return base .. ':q:' .. tkp(t) .. ':' .. l
end
-- Priority by turn (fair-turns.lua): levels, ledgers and when each ledger last grew.
local kLv = base .. ':lv'
local kDl = base .. ':dl'
local function dKey(t) return base .. ':d:' .. tkp(t) end
-- A tenant's ledger (fair-turns.lua): its length n and the index of its first id still in
-- BullMQ's prioritized set (n when none is): the ids BullMQ took are a prefix (it serves a
-- tenant's turns in order), found by bisection, O(log n) reads. Read only.
local function ledgerLive(t)
  local k, pz = dKey(t), cfg.jp .. 'prioritized'
  local n = redis.call('LLEN', k)
  local lo, hi = 0, n
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if redis.call('ZSCORE', pz, redis.call('LINDEX', k, mid)) then hi = mid else lo = mid + 1 end
  end
  return n, lo
end
-- Per-lane field name: the plain name for the single unnamed lane.
local function sf(field, l)
  if l == '' then return field end
  return field .. ':' .. l
end

-- Lua numbers lose digits through redis.call's default conversion: format them ourselves.
local function fmt(n) return string.format('%.17g', n) end
-- A count, without the float formatting a number argument gets.
local function int(n) return string.format('%d', n) end

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- One variadic command over a flat list, in chunks that unpack can take; returns the last
-- chunk's reply (a list's length after RPUSH), false for an empty list.
local function variadic(cmd, key, list, extra)
  local reply = false
  for i = 1, #list, CHUNK do
    local last = math.min(#list, i + CHUNK - 1)
    if extra then
      reply = redis.call(cmd, key, extra, unpack(list, i, last))
    else
      reply = redis.call(cmd, key, unpack(list, i, last))
    end
  end
  return reply
end

-- A variadic read (HMGET, SMISMEMBER) of many fields, chunked; returns one flat list.
local function readMany(cmd, key, fields)
  if #fields == 0 then return {} end
  if #fields <= CHUNK then return redis.call(cmd, key, unpack(fields)) end
  local out = {}
  for i = 1, #fields, CHUNK do
    local part = redis.call(cmd, key, unpack(fields, i, math.min(#fields, i + CHUNK - 1)))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end
local function hmgetMany(key, fields) return readMany('HMGET', key, fields) end

-- A job's stored options (JSON) with its top-level option `name` set to `value`, where it has one
-- or `add` is true: decoded and encoded again, as BullMQ stores them (cjson), so an option of the
-- same name inside another (a backoff's `delay`) is kept. Options that do not decode stay as
-- they are.
local function withOption(opts, name, value, add)
  local ok, o = pcall(cjson.decode, opts)
  if not ok or type(o) ~= 'table' then return opts end
  if o[name] == nil and not add then return opts end
  o[name] = value
  return cjson.encode(o)
end

-- A job's record '{"n":<name>}\n<tenant>' (jobRecord, fair-bull.lua): its tenant, its JSON
-- (JSON has no raw newline; a tenant id might, so the first newline is the end of the JSON). nil
-- for a record without its tenant line (not written by the gate, see dispatch).
local function jobTenant(v)
  local at = string.find(v, '\n', 1, true)
  return at and string.sub(v, at + 1) or nil
end
local function jobJson(v)
  local at = string.find(v, '\n', 1, true)
  return at and string.sub(v, 1, at - 1) or nil
end

-- The tenant a BullMQ job's envelope names (its data's _tenant.tenantId), else the system
-- bucket.
local function envelopeTenant(data)
  local ok, d = pcall(cjson.decode, data or '{}')
  local envelope = ok and type(d) == 'table' and d._tenant
  if type(envelope) == 'table' and type(envelope.tenantId) == 'string' then return envelope.tenantId end
  return cfg.sys
end

-- The id of the failed BullMQ record of gate job `id`: its own, where BullMQ accepts it as a
-- custom id (not an integer, no ':'), else "refused-" and the id with ':' escaped.
local function failedIdFor(id)
  if id == '' or string.find(id, '^%-?%d+$') or string.find(id, ':', 1, true) then
    return 'refused-' .. (string.gsub(id, ':', '%%3A'))
  end
  return id
end

-- Ends a job BullMQ never had (one an older version kept in its gate, see forgetDropped) as a
-- failed BullMQ job with `reason`, so the failed list, the dead letters and QueueEvents see it;
-- nothing when BullMQ has a job of that id already.
local function failInBull(id, reason, name, data, opts, now)
  local failedId = failedIdFor(id)
  local jk = cfg.jp .. failedId
  if redis.call('EXISTS', jk) == 1 then return end
  redis.call('HSET', jk, 'name', name, 'data', data, 'opts', opts, 'timestamp', now, 'delay', 0,
             'priority', 0, 'processedOn', now, 'finishedOn', now, 'failedReason', reason,
             'stacktrace', '[]', 'attemptsMade', 1, 'attemptsStarted', 0)
  redis.call('ZADD', cfg.jp .. 'failed', now, failedId)
  redis.call('XADD', cfg.jp .. 'events', 'MAXLEN', '~', 10000, '*', 'event', 'failed',
             'jobId', failedId, 'failedReason', reason, 'prev', 'waiting')
end

-- A binary heap of {name, pass} on (pass, name), a zset's own order (the tenants of a lane's
-- ready set in dispatch, the keys of a tenant in fair-fairkey.lua).
local function less(a, b)
  if a[2] ~= b[2] then return a[2] < b[2] end
  return a[1] < b[1]
end
local function heapPush(h, e)
  h[#h + 1] = e
  local i = #h
  while i > 1 do
    local p = math.floor(i / 2)
    if less(h[i], h[p]) then h[i], h[p] = h[p], h[i]; i = p else break end
  end
end
local function heapPop(h)
  local top = h[1]
  local n = #h
  h[1] = h[n]
  h[n] = nil
  n = n - 1
  local i = 1
  while true do
    local l, r, m = 2 * i, 2 * i + 1, i
    if l <= n and less(h[l], h[m]) then m = l end
    if r <= n and less(h[r], h[m]) then m = r end
    if m == i then break end
    h[i], h[m] = h[m], h[i]
    i = m
  end
  return top
end
