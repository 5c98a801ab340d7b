-- A task done (answered, or given up): never offered again; its id stays remembered for the rest of its ttl.
-- KEYS[1] pending zset  KEYS[2] bodies hash  KEYS[3] claims hash  KEYS[4] seen marker  KEYS[5] agents-with-tasks set
-- ARGV[1] task id  ARGV[2] agent  ARGV[3] seen ttl (ms)
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('SET', KEYS[4], 'done', 'PX', ARGV[3])
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('SREM', KEYS[5], ARGV[2]) end
return removed
