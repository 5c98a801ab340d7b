-- A (re)started run has not read the inbox yet: whatever an earlier attempt claimed is void, and a notification
-- follow-up BullMQ kept behind an earlier attempt is redundant, since this attempt reads everything unread now.
-- KEYS[1] hold hash  KEYS[2] version counter (unused)  KEYS[3] BullMQ's kept follow-up of the agent
-- ARGV[1] job id  ARGV[2] attempt  ARGV[3] ttl (ms)
redis.call('HSET', KEYS[1], 'job', ARGV[1], 'attempt', ARGV[2])
redis.call('HDEL', KEYS[1], 'count')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if redis.call('HGET', KEYS[3], 'name') == 'notification' then redis.call('DEL', KEYS[3]) end
return 1
