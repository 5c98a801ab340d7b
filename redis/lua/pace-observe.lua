-- What a server said about a bucket's allowance (rate-limit headers), folded into it: the server's count of what
-- remains is the truth (within the burst), and with none left the bucket is held back until the server's reset.
-- KEYS[1] the bucket hash   ARGV[1] remaining   ARGV[2] reset (ms)   ARGV[3] now (ms)   ARGV[4] burst
local remaining = tonumber(ARGV[1])
local resetAt = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local held = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
redis.call('HSET', KEYS[1], 'tokens', tostring(math.max(0, math.min(tonumber(ARGV[4]), remaining))), 'at', ARGV[3])
if remaining <= 0 and resetAt > held then redis.call('HSET', KEYS[1], 'until', ARGV[2]) end
local keep = math.max(resetAt - now, 60000)
if redis.call('PTTL', KEYS[1]) < keep then redis.call('PEXPIRE', KEYS[1], keep) end
return 1
