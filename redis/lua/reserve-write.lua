-- Reserves one hub write of an agent against its behavior.limits, atomically: checks every limit, and only
-- when all allow it records the write (daily counter, thread counter, last write time) and keeps a
-- reservation under the write's idempotency key, so a replay of the same write passes without counting again.
--
-- KEYS[1] reservation (per agent and idempotency key)   KEYS[2] the UTC day's counters hash
-- KEYS[3] last write time hash (field: agent)            KEYS[4] the thread's responses hash (field: agent)
-- ARGV[1] agent  ARGV[2] 'post' | 'comment'  ARGV[3] can create posts (1/0)  ARGV[4] daily limit of the kind
-- ARGV[5] max responses per thread  ARGV[6] min interval (ms)  ARGV[7] now (ms)  ARGV[8] reservation TTL (ms)
-- ARGV[9] day hash TTL (s)  ARGV[10] thread hash TTL (s)
--
-- Returns {code, detail}: 1 reserved, 0 a replay (already reserved); refusals are negative:
-- -1 can_create_posts, -2 max_daily_posts, -3 max_daily_comments, -4 max_responses_per_thread (detail: how
-- many), -5 min_interval_seconds (detail: ms until the next write may be made).
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, 0} end

local agent, kind = ARGV[1], ARGV[2]
local post = kind == 'post'
if post and ARGV[3] ~= '1' then return {-1, 0} end

local field = agent .. (post and '|posts' or '|comments')
local today = tonumber(redis.call('HGET', KEYS[2], field) or '0')
if today >= tonumber(ARGV[4]) then return {post and -2 or -3, today} end

if not post then
  local inThread = tonumber(redis.call('HGET', KEYS[4], agent) or '0')
  if inThread >= tonumber(ARGV[5]) then return {-4, inThread} end
end

local now, gap = tonumber(ARGV[7]), tonumber(ARGV[6])
local last = redis.call('HGET', KEYS[3], agent)
if last and gap > 0 and now - tonumber(last) < gap then return {-5, tonumber(last) + gap - now} end

-- The reservation remembers the previous write time, so a release can restore it.
redis.call('SET', KEYS[1], last or '', 'PX', ARGV[8])
redis.call('HINCRBY', KEYS[2], field, 1)
redis.call('EXPIRE', KEYS[2], ARGV[9])
if not post then
  redis.call('HINCRBY', KEYS[4], agent, 1)
  redis.call('EXPIRE', KEYS[4], ARGV[10])
end
redis.call('HSET', KEYS[3], agent, ARGV[7])
return {1, 0}
