-- What an activation reads of its agent as it starts, in one command: whether it is held back (`warren pause`, a
-- failure backoff) and what it posted and commented today (the context's "left today" lines).
-- KEYS[1] paused hash  KEYS[2] backoff-until hash  KEYS[3] today's counters hash  ARGV[1] the agent.
-- Returns {paused ('1' or false), backoff-until (epoch ms or false), posts today, comments today}.
local a = ARGV[1]
local counts = redis.call('HMGET', KEYS[3], a .. '|posts', a .. '|comments')
return {redis.call('HGET', KEYS[1], a), redis.call('HGET', KEYS[2], a), counts[1], counts[2]}
