-- What each of several agents' runs hold of their inbox (scheduler/inbox-claims.ts).
-- KEYS: per agent, three: its hold hash, BullMQ's deduplication key (current job) and kept follow-up hash.
-- ARGV[1] the notification job name  ARGV[2] BullMQ's job hash prefix (the job hash key comes from the
-- deduplication key's value, as in BullMQ's own scripts: same prefix, so same hash tag and slot on a cluster).
-- Returns, per agent, {held (-1 = all), version}.
local out = {}
for i = 1, #KEYS, 3 do
  local claim = redis.call('HMGET', KEYS[i], 'job', 'count', 'version')
  local held = 0
  local job = redis.call('GET', KEYS[i + 1])
  if job then
    if claim[1] == job and claim[2] then
      held = tonumber(claim[2])
    elseif redis.call('HGET', ARGV[2] .. job, 'name') == ARGV[1] then
      held = -1
    end
    if redis.call('HGET', KEYS[i + 2], 'name') == ARGV[1] then held = -1 end
  end
  out[#out + 1] = held
  out[#out + 1] = tonumber(claim[3]) or 0
end
return out
