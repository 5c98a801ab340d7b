-- The end of an activation (any outcome): when it ran (exploration's staleness order) and today's usage; a
-- success also ends the failure count and any backoff. One command where a MULTI of up to eleven was.
-- KEYS: last-activated, today's counters, failures, last failure, backoff-until.
-- ARGV: agent, at (ms), input tokens, output tokens, cost (USD), counters' TTL (s), reset backoff (1/0).
local agent = ARGV[1]
if ARGV[7] == '1' then
  redis.call('HDEL', KEYS[3], agent)
  redis.call('HDEL', KEYS[4], agent)
  redis.call('HDEL', KEYS[5], agent)
end
redis.call('HSET', KEYS[1], agent, ARGV[2])
redis.call('HINCRBY', KEYS[2], agent .. '|activations', 1)
redis.call('HINCRBY', KEYS[2], agent .. '|tokens_input', ARGV[3])
redis.call('HINCRBY', KEYS[2], agent .. '|tokens_output', ARGV[4])
redis.call('HINCRBYFLOAT', KEYS[2], agent .. '|cost_usd', ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[6])
return 1
