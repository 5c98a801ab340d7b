-- Just before the pipeline posts its answer, one command where two were: the answer kept in the reply outbox
-- (activation/reply-outbox.ts: a retry posts the same text under the same key), then the write reserved against the
-- agent's limits (reserve-write.lua). The answer is kept whatever the reservation says, as it was when they were two.
-- KEYS[1..4] reserve-write's  KEYS[5] the outbox key
-- ARGV[1..10] reserve-write's  ARGV[11] the answer  ARGV[12] its TTL (s)
-- Returns reserve-write's answer.
redis.call('SET', KEYS[5], ARGV[11], 'EX', ARGV[12])
return reserve_write({KEYS[1], KEYS[2], KEYS[3], KEYS[4]}, {ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]})
