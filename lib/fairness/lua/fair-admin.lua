--- @include "fair-dispatch"
--- @include "fair-settle"
--- @include "fair-keys"
--- @include "../modes/budget/fair-budget"
--- @include "fair-tenants"
--- @include "../modes/floors/fair-floor"
--[[
  Reads or changes one tenant's fairness state, then dispatches what became possible.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  tenant
  ARGV[4]  operation: get | weight | cap | rate | min | pause | resume | hints | floors | recall
           | wake (recall: goes on with the tenant's unfinished recall, recallTurns in
           fair-turns.lua; wake: a page of the tenants with a backlog back in turn, after
           fair-layout.lua moved a backlog; its value and sixth reply field are pages)
  ARGV[5]  value for weight/cap/rate/min ('' clears the runtime override; rate: "T:tol" or "none"),
           or the tenant's hints for hints (JSON [weight, cap, rate, lanes, floor])
  get returns {w, dw, cap, dcap, inf, paused, slow, backlog, failures, rl, drl, limitedUntil,
  min, dmin, pausedAt (Redis clock, ms; false when not paused), jobs queued by turn (its ledger,
  fair-turns.lua)}; floors (tenant unused) returns {sum of recorded floors, tenants, workers' slots};
  the others return {{}, {id, json, priority, ...}, wake ms, with a budget: the queues it woke
  (else false), 1 when the tenant's recall is not finished (call again with recall) else 0}.
]]
local t, op, value = ARGV[3], ARGV[4], ARGV[5]
if op == 'floors' then return floorTotals() end
if op == 'wake' then
  -- A gate starting after one of other lanes or fair keys ran the queue (fair-layout.lua): that
  -- gate's releases put a capped tenant back in turn in its own keys only, so a tenant with a
  -- backlog here may wait out of turn with its slot free. Every tenant with a backlog in this
  -- gate's keys is put back in turn (tenant unused), a page of about 1,000 a call (20,000
  -- tenants in one call held Redis 0.4 s): value is where this page starts ("<lane index>:<HSCAN
  -- cursor>", '' for the first), and the reply's sixth field where the next does ('' when done).
  local li, cursor = 1, '0'
  if value ~= '' then
    local sep = string.find(value, ':', 1, true)
    li, cursor = tonumber(string.sub(value, 1, sep - 1)), string.sub(value, sep + 1)
  end
  local page = redis.call('HSCAN', bKey(LANES[li]), cursor, 'COUNT', 1000)
  local list = {}
  for i = 1, #page[2], 2 do list[#list + 1] = page[2][i] end
  local nextPage = ''
  if page[1] ~= '0' then
    nextPage = li .. ':' .. page[1]
  elseif li < #LANES then
    nextPage = (li + 1) .. ':0'
  end
  loadTenants(list)
  for _, id in ipairs(list) do activate(id) end
  local now = nowMs()
  local out = dispatch(tonumber(ARGV[2]), now)
  flushTenants(now)
  return {{}, out, nextWake(now), budgetWoken() or false, 0, nextPage}
end
local function rateOf()
  local r = redis.call('HMGET', tKey(t), 'rl', 'drl')
  return r[1] or r[2] or cfg.rl or 'none'
end
if op == 'recall' then
  local now = nowMs()
  -- Only a recall begun and not finished: a ledger that grew since is not taken back.
  if cfg.dt and redis.call('ZSCORE', base .. ':rc', t) and recallTurns(t, now) > 0 then activate(t) end
  local out = dispatch(tonumber(ARGV[2]), now)
  flushTenants(now)
  return {{}, out, nextWake(now), budgetWoken() or false, redis.call('ZSCORE', base .. ':rc', t) and 1 or 0}
end
local rateBefore = rateOf()
if op == 'get' then
  local r = redis.call('HMGET', tKey(t), unpack(SFIELDS))
  local byTurn = cfg.dt and ledgerTrim(t) or 0
  -- When its oldest waiting job was enqueued (BullMQ's `timestamp`): the next id of each lane's
  -- backlog and, by turn, its ledger's head (trimmed above), read from the jobs BullMQ holds.
  local since = false
  local function consider(id)
    local at = id and tonumber(redis.call('HGET', cfg.jp .. id, 'timestamp'))
    if at and (not since or at < since) then since = at end
  end
  for _, l in ipairs(LANES) do consider(backlogIds(t, l, 1)[1]) end
  if byTurn > 0 then consider(redis.call('LINDEX', dKey(t), 0)) end
  return {r[1], r[2], r[3], r[4], redis.call('HGET', kInf, t), r[5], r[6], backlog(tenant(t)),
          redis.call('ZCARD', fKey(t)), r[7], r[8], redis.call('ZSCORE', kLimited, t) or false,
          r[10], r[11], redis.call('HGET', tKey(t), 'pausedAt'), byTurn, since}
end
if op == 'weight' or op == 'cap' or op == 'rate' or op == 'min' then
  local field = ({weight = 'w', cap = 'cap', rate = 'rl', min = 'min'})[op]
  if value == '' then clearSettings(t, field) else setSettings(t, field, value) end
  if op == 'min' then recordFloor(t) end
elseif op == 'pause' then
  -- Paused since its first pause: pausing again does not move the time.
  if redis.call('HGET', tKey(t), 'paused') ~= '1' then setSettings(t, 'paused', 1, 'pausedAt', nowMs()) end
elseif op == 'resume' then
  clearSettings(t, 'paused', 'pausedAt')
elseif op == 'hints' then
  applyHints({t, cjson.decode(value)})
end
-- A new rate limit starts the tenant afresh: a schedule built at the old rate would hold it back.
if rateOf() ~= rateBefore then redis.call('HDEL', kTat, t) end
-- Re-evaluate the tenant under its new settings: its next pick re-checks cap and rate.
redis.call('ZREM', kLimited, t)
forget(t)
local r = tenant(t)
-- Priority by turn: what the tenant has queued in BullMQ by its turns comes back to the gate,
-- which holds it under the rule (fair-turns.lua).
if cfg.dt and ruleHeld(r) then recallTurns(t, nowMs()) end
-- activate records a budget's hold of a tenant at its cap (else no release would wake it here).
if r.paused or capped(r) then deactivate(t) end
activate(t)
local now = nowMs()
local out = dispatch(tonumber(ARGV[2]), now)
flushTenants(now)
return {{}, out, nextWake(now), budgetWoken() or false, cfg.dt and redis.call('ZSCORE', base .. ':rc', t) and 1 or 0}
