--- @include "fair-dispatch"
--- @include "fair-settle"
--- @include "fair-keys"
--- @include "../modes/budget/fair-budget"
--- @include "fair-tenants"
--- @include "../modes/time-share/fair-time"
--[[
  Frees the slots of finished jobs (final outcomes only), updates the slow lane, and dispatches
  the next jobs in the same call.
  KEYS[1]  gate base key
  ARGV[1]  gate config (JSON, see fair-keys.lua)
  ARGV[2]  most jobs to dispatch in this call
  ARGV[3]  slow lane config, JSON: threshold (0 = off), window (ms), recoverAt
  ARGV[4..] pairs: job id, outcome (c completed | f failed for good | x cancelled | d<tenant>
           a job that skipped the gate failed for good, fair-turns.lua); with
           share 'time' (cfg.ts) triples: job id, outcome, measured run time (ms, '' unknown),
           where outcome r is a failed attempt that retries (charged, its slot kept)
  Returns {{event, tenant, failures, ...}, {admitted id, ...}, ms until a rate-limited tenant wakes (-1 none),
           with a budget: the queues it woke}.
]]
local now = nowMs()
local slowCfg = cjson.decode(ARGV[3])
local released = {}
local times = nil
local retried, retryTimes = {}, {}
if TS then
  -- Triples: the run time of each job comes with it; outcome r, a failed attempt that retries,
  -- is charged its run time and keeps its slot.
  times = {}
  for i = 4, #ARGV, 3 do
    if ARGV[i + 1] == 'r' then
      retried[#retried + 1] = ARGV[i]
      retryTimes[ARGV[i]] = (tonumber(retryTimes[ARGV[i]]) or 0) + (tonumber(ARGV[i + 2]) or 0)
    else
      released[#released + 1] = ARGV[i]
      released[#released + 1] = ARGV[i + 1]
      times[ARGV[i]] = ARGV[i + 2]
    end
  end
  chargeAttempts(retried, retryTimes)
else
  for i = 4, #ARGV do released[#released + 1] = ARGV[i] end
end
local touched, events = {}, {}
releaseMany(released, now, slowCfg, touched, events, times)
afterRelease(touched, now, slowCfg, events)
local out = dispatch(tonumber(ARGV[2]), now)
flushTenants(now)
return {events, out, nextWake(now), budgetWoken()}
