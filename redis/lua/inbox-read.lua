-- The run has read its inbox, one command where one and one per notification were: its claim on what it read
-- (inbox-claim.lua), then the answers an earlier attempt kept in the reply outbox for the notifications it will
-- answer (activation/reply-outbox.ts), so none is asked for again.
-- KEYS[1..2] inbox-claim's (hold, version)  KEYS[3..] the outbox keys of the notifications to answer
-- ARGV as inbox-claim's (job id, attempt, ttl, count)
-- Returns {inbox-claim's code, then per outbox key its text or nil}; only the code when the claim was lost (-1).
local code = inbox_claim({KEYS[1], KEYS[2]}, ARGV)
if code ~= 1 then return {code} end
local out = {code}
for i = 3, #KEYS do out[i - 1] = redis.call('GET', KEYS[i]) or false end
return out
