-- What holds each of some agents back (`warren pause`, a failure backoff): read at every activation's start and
-- for every agent an intake round looks at. One command, where a pipeline of HGETs (or HMGETs of six facts, four
-- of them unused) cost the daemon more to build and parse than Redis to answer.
-- KEYS[1] paused hash  KEYS[2] backoff-until hash  ARGV the agents.
-- Returns, per agent, two values: paused ('1' or false) and backoff-until (epoch ms or false).
local out = {}
local CHUNK = 1000 -- unpack() has a stack limit
for first = 1, #ARGV, CHUNK do
  local last = math.min(first + CHUNK - 1, #ARGV)
  local names = {}
  for i = first, last do names[#names + 1] = ARGV[i] end
  local paused = redis.call('HMGET', KEYS[1], unpack(names))
  local until_ = redis.call('HMGET', KEYS[2], unpack(names))
  for j = 1, #names do
    out[#out + 1] = paused[j]
    out[#out + 1] = until_[j]
  end
end
return out
