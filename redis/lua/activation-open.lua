-- A notification run has read its inbox: one command for what it holds of it (inbox-open.lua), what the activation
-- reads of its agent (activation-start.lua: held back? posts and comments today) and the answers an earlier attempt
-- kept in the reply outbox for the notifications it will answer (activation/reply-outbox.ts), so none is asked for
-- again. Both parts run as they do alone (redis/scripts.ts makes each file a function here).
-- KEYS[1..3] activation-start's (paused, backoff-until, today's counters)
-- KEYS[4..6] inbox-open's (hold, version, BullMQ's kept follow-up)  KEYS[7..] the outbox keys
-- ARGV[1] the agent  ARGV[2..6] inbox-open's (job id, attempt, start number, ttl, count)
-- Returns {-1} when a later attempt holds the inbox; else {1, activation-start's four answers, then per outbox key
-- its text or false}.
local code = inbox_open({KEYS[4], KEYS[5], KEYS[6]}, {ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]})
if code ~= 1 then return {code} end
local out = {1}
for _, v in ipairs(activation_start({KEYS[1], KEYS[2], KEYS[3]}, {ARGV[1]})) do out[#out + 1] = v end
for i = 7, #KEYS do out[#out + 1] = redis.call('GET', KEYS[i]) or false end
return out
