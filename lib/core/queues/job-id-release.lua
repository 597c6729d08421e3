--[[
  Releases the owner keys one call of job-id-owners.lua created, when the call is refused after
  its claim (or its answer was lost): deletes each key that still holds that call's token, so a
  key another call created or renewed is left alone. Harmless when the claim never ran.
  KEYS[i]   owner key of id i
  ARGV[1]   the call's token (16 characters)
  ARGV[1+i] owner of id i ('t' .. tenant id, or 's')
  Returns the number of keys deleted.
]]
local released = 0
for i = 1, #KEYS do
  local want = ARGV[1 + i]
  local mine = string.upper(string.sub(want, 1, 1)) .. ARGV[1] .. string.sub(want, 2)
  if redis.call('GET', KEYS[i]) == mine then
    redis.call('DEL', KEYS[i])
    released = released + 1
  end
end
return released
