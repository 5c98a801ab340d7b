-- Gives back a reservation of reserve-write.lua whose write the hub refused (it never happened): the counters
-- go down again and the last write time returns to what it was, unless a later write has moved it since.
--
-- KEYS as in reserve-write.lua. ARGV[1] agent  ARGV[2] 'post' | 'comment'  ARGV[3] the reservation's time (ms)
-- Returns 1 when released, 0 when there was no reservation (already released, or expired).
local previous = redis.call('GET', KEYS[1])
if not previous then return 0 end
redis.call('DEL', KEYS[1])

local agent, post = ARGV[1], ARGV[2] == 'post'
local field = agent .. (post and '|posts' or '|comments')
if tonumber(redis.call('HGET', KEYS[2], field) or '0') > 0 then redis.call('HINCRBY', KEYS[2], field, -1) end
if not post and tonumber(redis.call('HGET', KEYS[4], agent) or '0') > 0 then redis.call('HINCRBY', KEYS[4], agent, -1) end
if redis.call('HGET', KEYS[3], agent) == ARGV[3] then
  if previous == '' then redis.call('HDEL', KEYS[3], agent) else redis.call('HSET', KEYS[3], agent, previous) end
end
return 1
