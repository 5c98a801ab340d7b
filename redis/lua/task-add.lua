-- A task for an agent, once: its id is remembered (ARGV[5] ms) whether it waits, runs or is done, so a repeated
-- delivery (a webhook sent again, a schedule tick seen by two daemons) adds nothing. 1 added, 0 seen before, -1 full.
-- KEYS[1] pending zset  KEYS[2] bodies hash  KEYS[3] seen marker  KEYS[4] agents-with-tasks set
-- ARGV[1] task id  ARGV[2] created at (ms, the order)  ARGV[3] body (JSON)  ARGV[4] agent  ARGV[5] seen ttl  ARGV[6] most pending
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[6]) then return -1 end
redis.call('SET', KEYS[3], 'pending', 'PX', ARGV[5])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[4])
return 1
