-- The hub's budget status an activation read for its agent, and when: until it is older than the budget's TTL, the
-- intake takes it as the hub's answer for that agent instead of asking again (scheduler/budget-cache.ts). A run
-- that read it earlier and ends later does not overwrite a fresher reading.
-- KEYS[1] budget-seen hash  ARGV[1] agent  ARGV[2] status  ARGV[3] when it was read (epoch ms).
-- Returns 1 when stored, 0 when the hash held a fresher reading.
local current = redis.call('HGET', KEYS[1], ARGV[1])
local at = current and tonumber(string.match(current, '|(%d+)$'))
if at and at > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|' .. ARGV[3])
return 1
