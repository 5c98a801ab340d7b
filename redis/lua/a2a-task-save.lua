-- An A2A task's new state, unless it would go back: a state ranks 1 (submitted), 2 (working, input or auth
-- required) or 3 (ended); a lower rank than the stored one is refused, and an ended task is never written again,
-- so its answer is written once however many times it is told. With `forward_only` (the SDK's saves, which echo what
-- warren already wrote and forwarded) a write at the stored rank is refused too: an echo that lands late must not
-- take back a newer word at the same stage (WORKING, then WORKING "waiting for a person's approval").
-- KEYS[1] the task's hash  KEYS[2] the index of tasks (a zset by creation)
-- ARGV[1] task id  ARGV[2] body  ARGV[3] state  ARGV[4] rank  ARGV[5] agent ('' = keep)  ARGV[6] caller  ARGV[7] now ms  ARGV[8] ttl ms
-- ARGV[9] forward_only (1 or 0)
local cur = tonumber(redis.call('HGET', KEYS[1], 'rank') or '0')
local rank = tonumber(ARGV[4])
if cur >= 3 or rank < cur then return 0 end
if ARGV[9] == '1' and rank == cur then return 0 end
redis.call('HSET', KEYS[1], 'body', ARGV[2], 'state', ARGV[3], 'rank', rank, 'updated', ARGV[7])
if cur == 0 then redis.call('HSET', KEYS[1], 'created', ARGV[7]) end
if ARGV[5] ~= '' and not redis.call('HGET', KEYS[1], 'agent') then
  redis.call('HSET', KEYS[1], 'agent', ARGV[5], 'caller', ARGV[6])
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[7], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[8])
return 1
