-- Of the agents with tasks, those with one nobody holds (or whose holder's claim lapsed): the ones to activate.
-- KEYS[1] agents-with-tasks set  ARGV[1] pending zset prefix  ARGV[2] claims hash prefix  ARGV[3] now (ms)
local now = tonumber(ARGV[3])
local out = {}
for _, agent in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local ids = redis.call('ZRANGE', ARGV[1] .. agent, 0, -1)
  if #ids == 0 then
    redis.call('SREM', KEYS[1], agent)
  else
    for _, id in ipairs(ids) do
      local c = redis.call('HGET', ARGV[2] .. agent, id)
      local untilMs = c and string.match(c, '|(%d+)|%d+$')
      if not c or tonumber(untilMs) <= now then
        out[#out + 1] = agent
        break
      end
    end
  end
end
return out
