-- The run read ARGV[4] unread notifications: it holds that many now. Writes of the attempt that began last only:
-- an attempt that lost its lock and still runs changes nothing, and is told so (-1).
-- KEYS[1] hold hash  KEYS[2] version counter  ARGV[1] job id  ARGV[2] attempt  ARGV[3] ttl (ms)  ARGV[4] count
local owner = redis.call('HMGET', KEYS[1], 'job', 'attempt')
if owner[1] ~= ARGV[1] or owner[2] ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[1], 'count', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
