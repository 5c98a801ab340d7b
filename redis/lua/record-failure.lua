-- Counts an agent's terminal failure and starts the wait for the new count; the longer of two waits stands.
-- KEYS: failures, last failure, backoff-until hashes. ARGV: agent, now, not-before, waits… (ms after 1, 2, … failures).
-- Returns {failures, backoff until}.
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local waits = #ARGV - 3
local wait = tonumber(ARGV[3 + math.min(n, waits)])
local untilAt = math.max(tonumber(ARGV[2]) + wait, tonumber(ARGV[3]))
local current = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if untilAt > current then redis.call('HSET', KEYS[3], ARGV[1], untilAt) else untilAt = current end
return {n, untilAt}
