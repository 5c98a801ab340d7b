-- Keeps a finished activation's record: newest first in the agent's list and the overall list, each trimmed to its
-- bound, and announces it to `warren logs --follow`. One command where a MULTI of six was.
-- KEYS[1] the agent's records  KEYS[2] all records
-- ARGV[1] record (JSON)  ARGV[2] per-agent bound  ARGV[3] overall bound  ARGV[4] channel
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
