-- An activation lets go of its task (it did not get to it): the next one takes it, without counting a claim.
-- KEYS[1] claims hash  ARGV[1] task id  ARGV[2] activation id
local c = redis.call('HGET', KEYS[1], ARGV[1])
if not c then return 0 end
local holder, _, claims = string.match(c, '^(.*)|(%d+)|(%d+)$')
if holder ~= ARGV[2] then return 0 end
local left = tonumber(claims) - 1
if left <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], '|0|' .. left) end
return 1
