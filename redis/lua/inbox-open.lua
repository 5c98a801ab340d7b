-- The run has read its inbox: from now on it holds the ARGV[5] unread notifications it read. Written after the read,
-- not before it: until now the run's job held the whole inbox already (inbox-held.lua: a started notification job
-- with no claim of its own holds everything), so the intake sees the same before this as a claim begun at the start
-- would have shown, and the claim costs one command, here.
-- An earlier attempt of the run that still claims (it read the inbox and never let go: it died, or lost its lock and
-- still runs) is taken over, and its later writes are refused; a later attempt wins (-1), told by the start number.
-- KEYS[1] hold hash  KEYS[2] version counter (unused)  KEYS[3] BullMQ's kept follow-up of the agent
-- ARGV[1] job id  ARGV[2] attempt  ARGV[3] the attempt's start number (BullMQ's attemptsStarted)  ARGV[4] ttl (ms)
-- ARGV[5] count
local owner = redis.call('HMGET', KEYS[1], 'job', 'attempt', 'started', 'count')
local earlier = owner[1] == ARGV[1] and owner[2] ~= ARGV[2]
if earlier and (tonumber(owner[3]) or 0) > (tonumber(ARGV[3]) or 0) then return -1 end
-- A notification follow-up BullMQ kept behind the run is redundant: it was queued before the read, which took
-- everything unread then. Not while an earlier attempt's claim stood: the intake counted only that many as held,
-- and may have kept one for what came after the read.
if not (earlier and owner[4]) and redis.call('HGET', KEYS[3], 'name') == 'notification' then redis.call('DEL', KEYS[3]) end
redis.call('HSET', KEYS[1], 'job', ARGV[1], 'attempt', ARGV[2], 'started', ARGV[3], 'count', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
