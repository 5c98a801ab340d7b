-- The start of a notification run, one command where two were: what the activation reads of its agent
-- (activation-start.lua: held back? posts and comments today) and the run's claim on the whole inbox
-- (inbox-begin.lua). Both parts run as they do alone (redis/scripts.ts makes each file a function here).
-- KEYS[1..3] activation-start's (paused, backoff-until, today's counters)
-- KEYS[4..6] inbox-begin's (hold, version, BullMQ's kept follow-up)
-- ARGV[1] the agent  ARGV[2..4] inbox-begin's (job id, attempt, ttl)
-- Returns activation-start's answer.
inbox_begin({KEYS[4], KEYS[5], KEYS[6]}, {ARGV[2], ARGV[3], ARGV[4]})
return activation_start({KEYS[1], KEYS[2], KEYS[3]}, {ARGV[1]})
