-- What holds each of some agents back (`warren pause`, a failure backoff), with the budget status its last run read
-- (budget-seen.lua): read for every agent an intake round looks at. One command, where a pipeline of HGETs (or
-- HMGETs of six facts, four of them unused) cost the daemon more to build and parse than Redis to answer.
-- KEYS[1] paused hash  KEYS[2] backoff-until hash  KEYS[3] budget-seen hash  ARGV the agents.
-- Returns, per agent, three values: paused ('1' or false), backoff-until (epoch ms or false) and the budget seen
-- ('status|epoch ms' or false).
local out = {}
local CHUNK = 1000 -- unpack() has a stack limit
for first = 1, #ARGV, CHUNK do
  local last = math.min(first + CHUNK - 1, #ARGV)
  local names = {}
  for i = first, last do names[#names + 1] = ARGV[i] end
  local paused = redis.call('HMGET', KEYS[1], unpack(names))
  local until_ = redis.call('HMGET', KEYS[2], unpack(names))
  local budget = redis.call('HMGET', KEYS[3], unpack(names))
  for j = 1, #names do
    out[#out + 1] = paused[j]
    out[#out + 1] = until_[j]
    out[#out + 1] = budget[j]
  end
end
return out
