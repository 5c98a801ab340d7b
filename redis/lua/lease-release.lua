-- Drops the leader lease if ARGV[1] holds it. KEYS[1] lease. Returns 1 released, 0 not ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
