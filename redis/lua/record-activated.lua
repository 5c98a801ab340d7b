-- The end of an activation (any outcome): when it ran (exploration's staleness order) and today's usage; a
-- success also ends the failure count and any backoff. One command where a MULTI of up to eleven was.
-- KEYS: last-activated, today's counters, failures, last failure, backoff-until.
-- ARGV: agent, at (ms), input tokens, output tokens, cost (USD), counters' TTL (s), reset backoff (1/0).
-- Returns 1 when a reset ended a failure streak (the last failure's time was still set), else 0: only then may the
-- agent be paused by its failures (activation/status-poster.ts ranWell), so only then is the fleet's ledger asked.
local agent = ARGV[1]
local ended = 0
if ARGV[7] == '1' then
  redis.call('HDEL', KEYS[3], agent)
  ended = redis.call('HDEL', KEYS[4], agent)
  redis.call('HDEL', KEYS[5], agent)
end
redis.call('HSET', KEYS[1], agent, ARGV[2])
redis.call('HINCRBY', KEYS[2], agent .. '|activations', 1)
redis.call('HINCRBY', KEYS[2], agent .. '|tokens_input', ARGV[3])
redis.call('HINCRBY', KEYS[2], agent .. '|tokens_output', ARGV[4])
redis.call('HINCRBYFLOAT', KEYS[2], agent .. '|cost_usd', ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[6])
return ended
