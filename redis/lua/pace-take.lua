-- Takes one request's token from every bucket of KEYS at once, or from none: a request is paced by its key's
-- bucket and the host's bucket together, so two daemons (or two agents on one host) share one allowance.
-- Each bucket is a hash {tokens, at, until}: a token bucket refilled at its rate since `at`, and a penalty
-- (`until`, ms) a 429 set, which holds it back whatever its tokens.
--
-- KEYS[i] the i-th bucket   ARGV[1] now (ms)   ARGV[2] TTL (ms) kept at least on a bucket written
-- then per bucket i: ARGV[1+2i] tokens per minute (0: the bucket only carries penalties), ARGV[2+2i] burst
--
-- Returns 0 when a token was taken from each, else the ms to wait (the longest any bucket asks; nothing taken).
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local wait = 0
local tokens = {}
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[1 + 2 * i]) / 60000
  local burst = tonumber(ARGV[2 + 2 * i])
  local h = redis.call('HMGET', key, 'tokens', 'at', 'until')
  local held = tonumber(h[3] or '0')
  if held > now then wait = math.max(wait, held - now) end
  if rate > 0 then
    local t = burst
    -- Another daemon's clock may be a little ahead: never refill backwards.
    if h[1] then t = math.min(burst, tonumber(h[1]) + math.max(0, now - tonumber(h[2] or now)) * rate) end
    if t < 1 then wait = math.max(wait, math.ceil((1 - t) / rate)) end
    tokens[i] = t
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  if tokens[i] then
    redis.call('HSET', key, 'tokens', tostring(tokens[i] - 1), 'at', tostring(now))
    if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
  end
end
return 0
