-- Takes the leader lease when it is free, or renews it when ARGV[1] holds it, in one round trip; a daemon can
-- never extend a lease it lost. KEYS[1] lease  ARGV[1] holder token  ARGV[2] ttl (ms). Returns 1 held, 0 not.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0
