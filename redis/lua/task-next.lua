-- The task an activation works on: the one it claimed before (a retry of the same activation gets it again), else
-- the oldest task nobody holds (or whose holder's claim lapsed). Returns {id, body, claims} or false.
-- Each claim by a new activation counts: the caller gives a task up after too many (a task that kills its runs).
-- KEYS[1] pending zset  KEYS[2] bodies hash  KEYS[3] claims hash (id -> "activation|until|claims")
-- ARGV[1] activation id  ARGV[2] now (ms)  ARGV[3] claim ttl (ms)
local now = tonumber(ARGV[2])
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local free = nil
local freeClaims = 0
for _, id in ipairs(ids) do
  local c = redis.call('HGET', KEYS[3], id)
  if c then
    local holder, untilMs, claims = string.match(c, '^(.*)|(%d+)|(%d+)$')
    if holder == ARGV[1] then
      redis.call('HSET', KEYS[3], id, ARGV[1] .. '|' .. (now + tonumber(ARGV[3])) .. '|' .. claims)
      return {id, redis.call('HGET', KEYS[2], id), tonumber(claims)}
    end
    if free == nil and tonumber(untilMs) <= now then
      free = id
      freeClaims = tonumber(claims)
    end
  elseif free == nil then
    free = id
    freeClaims = 0
  end
end
if free == nil then return false end
freeClaims = freeClaims + 1
redis.call('HSET', KEYS[3], free, ARGV[1] .. '|' .. (now + tonumber(ARGV[3])) .. '|' .. freeClaims)
return {free, redis.call('HGET', KEYS[2], free), freeClaims}
