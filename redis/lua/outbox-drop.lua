-- An answer now on the hub, dropped from the reply outbox (activation/reply-outbox.ts).
-- KEYS[1] the outbox key
redis.call('DEL', KEYS[1])
return 1
