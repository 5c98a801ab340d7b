-- Notifications a hub adapter found, kept as pending unless handled: checked here, in the command that adds them,
-- because a scan reads the handled set before it adds, and an activation may mark one handled in between (it was
-- then pending again, and answered again). Answers how many were added.
-- KEYS[1] pending hash (id → JSON)  KEYS[2] handled set  ARGV id1, json1, id2, json2, …
local added = 0
for i = 1, #ARGV, 2 do
  if redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 0 then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    added = added + 1
  end
end
return added
