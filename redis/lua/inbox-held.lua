-- What each of several agents' runs hold of their inbox (scheduler/inbox-claims.ts).
-- KEYS[1] the hold version counter (unread here: it routes the script to the prefix's slot on a cluster)
-- ARGV[1] the notification job name  ARGV[2] BullMQ's job hash prefix  ARGV[3] the hold hash prefix
-- ARGV[4] BullMQ's deduplication key prefix (current job)  ARGV[5] BullMQ's kept follow-up key prefix
-- ARGV[6..] the agents. Keys are made here from the prefixes, as BullMQ's own scripts make a job hash's key
-- from its id: the same prefix, so the same hash tag and slot on a cluster, and the daemon sends each name once.
-- Returns, per agent, {held (-1 = all), version}.
local out = {}
for i = 6, #ARGV do
  local agent = ARGV[i]
  local claim = redis.call('HMGET', ARGV[3] .. agent, 'job', 'count', 'version')
  local held = 0
  local job = redis.call('GET', ARGV[4] .. agent)
  if job then
    if claim[1] == job and claim[2] then
      held = tonumber(claim[2])
    elseif redis.call('HGET', ARGV[2] .. job, 'name') == ARGV[1] then
      held = -1
    end
    if redis.call('HGET', ARGV[5] .. agent, 'name') == ARGV[1] then held = -1 end
  end
  out[#out + 1] = held
  out[#out + 1] = tonumber(claim[3]) or 0
end
return out
