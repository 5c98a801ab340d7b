-- Holds a pacing bucket back until ARGV[1] (ms; only ever lengthens a penalty), as a 429's Retry-After asked.
-- KEYS[1] the bucket hash   ARGV[1] until (ms)   ARGV[2] now (ms)
local untilMs = tonumber(ARGV[1])
local held = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if untilMs > held then redis.call('HSET', KEYS[1], 'until', ARGV[1]) end
local keep = untilMs - tonumber(ARGV[2])
if keep > 0 and redis.call('PTTL', KEYS[1]) < keep then redis.call('PEXPIRE', KEYS[1], keep) end
return 1
