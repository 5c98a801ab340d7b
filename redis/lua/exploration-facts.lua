-- What an exploration round needs to know of many agents, in one command (scheduler/agent-state.ts): reading
-- it as six HMGETs and an MGET spent most of a 10,000-agent round building and parsing commands in the daemon.
-- KEYS[1] last-activated hash  KEYS[2] paused hash  KEYS[3] backoff-until hash  KEYS[4] today's counter hash
-- ARGV[1] the prefix of BullMQ's deduplication keys (a key there = an activation queued or running; same hash
-- tag as the rest, so same slot on a cluster)  ARGV[2..] the agents.
-- Returns one string, a line per agent in ARGV order joined by "\n": "-" when busy, else
-- "lastActivated,paused,backoffUntil,posts,comments" (empty = unset), or only "lastActivated" (possibly empty)
-- when the other four are unset, the usual case. One string, not an array of 100,000: the daemon's client
-- would build a string per element (a fifth of a round's CPU there), and slices of one are cheap.
local out = {}
local n = #ARGV - 1
local CHUNK = 1000 -- unpack() has a stack limit
for first = 2, n + 1, CHUNK do
  local last = math.min(first + CHUNK - 1, n + 1)
  local names, dedup, day = {}, {}, {}
  for i = first, last do
    local a = ARGV[i]
    names[#names + 1] = a
    dedup[#dedup + 1] = ARGV[1] .. a
    day[#day + 1] = a .. '|posts'
    day[#day + 1] = a .. '|comments'
  end
  local busy = redis.call('MGET', unpack(dedup))
  local la = redis.call('HMGET', KEYS[1], unpack(names))
  local paused = redis.call('HMGET', KEYS[2], unpack(names))
  local until_ = redis.call('HMGET', KEYS[3], unpack(names))
  local counts = redis.call('HMGET', KEYS[4], unpack(day))
  for j = 1, #names do
    local p, u, posts, comments = paused[j], until_[j], counts[2 * j - 1], counts[2 * j]
    if busy[j] then
      out[#out + 1] = '-'
    elseif p or u or posts or comments then
      out[#out + 1] = (la[j] or '') .. ',' .. (p or '') .. ',' .. (u or '') .. ',' .. (posts or '') .. ',' .. (comments or '')
    else
      out[#out + 1] = la[j] or ''
    end
  end
end
return table.concat(out, '\n')
