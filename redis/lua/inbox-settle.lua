-- ARGV[3] claimed notifications were marked read. Decreases bump the version: a scheduler whose unread counts
-- were taken before it must not trust them. -1: this attempt is no longer the run's latest.
-- KEYS[1] hold hash  KEYS[2] version counter  ARGV[1] job id  ARGV[2] attempt  ARGV[3] count
local owner = redis.call('HMGET', KEYS[1], 'job', 'attempt')
if owner[1] ~= ARGV[1] or owner[2] ~= ARGV[2] then return -1 end
if redis.call('HEXISTS', KEYS[1], 'count') == 1 then redis.call('HINCRBY', KEYS[1], 'count', -tonumber(ARGV[3])) end
redis.call('HSET', KEYS[1], 'version', redis.call('INCR', KEYS[2]))
return 1
