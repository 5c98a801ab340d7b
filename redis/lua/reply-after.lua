-- The answer is on the hub and its notification read, one command where two were: the kept answer dropped from the
-- reply outbox (outbox-drop.lua), then the claim settled (inbox-settle.lua). The outbox key goes first: a lost
-- claim (-1) still leaves no answer behind.
-- KEYS[1..2] inbox-settle's (hold, version)  KEYS[3] the outbox key
-- ARGV as inbox-settle's (job id, attempt, count)
-- Returns inbox-settle's code.
outbox_drop({KEYS[3]}, {})
return inbox_settle({KEYS[1], KEYS[2]}, ARGV)
