-- Holds an agent back until ARGV[2] (only ever lengthens a wait). KEYS[1] backoff-until hash  ARGV[1] agent.
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > current then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
