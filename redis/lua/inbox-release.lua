-- The run is over: it holds nothing it has not read; until BullMQ finishes the job it is still "starting".
-- -1: this attempt is no longer the run's latest.
-- KEYS[1] hold hash  KEYS[2] version counter  ARGV[1] job id  ARGV[2] attempt
local owner = redis.call('HMGET', KEYS[1], 'job', 'attempt')
if owner[1] ~= ARGV[1] or owner[2] ~= ARGV[2] then return -1 end
redis.call('HDEL', KEYS[1], 'count')
redis.call('HSET', KEYS[1], 'version', redis.call('INCR', KEYS[2]))
return 1
