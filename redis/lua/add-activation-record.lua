-- Keeps a finished activation's record: newest first in the agent's list and the overall list, each trimmed to its
-- retention (README "Records and Redis memory"), and announces it to `warren logs --follow`. One command.
-- Retention per list, oldest first out: at most `count` records, `bytes` bytes of them, none started before
-- `cutoff`; the newest record always stays. A list's byte total lives in one hash (KEYS[3], field = the list's
-- key); a list written before the total existed is summed once. Each list expires `ttl` ms after its last record,
-- so the history of an agent that stopped running (or was removed) goes away by itself.
-- KEYS[1] the agent's records  KEYS[2] all records  KEYS[3] byte totals (hash)
-- ARGV[1] record (JSON, `"started_at":"<ISO>"` among its first fields)  ARGV[2] per-agent count  ARGV[3] overall
-- count  ARGV[4] channel  ARGV[5] per-agent bytes  ARGV[6] overall bytes  ARGV[7] cutoff (ISO time: older records
-- go)  ARGV[8] ttl (ms)
local record = ARGV[1]
local cutoff = ARGV[7]

local function startedAt(item)
  -- ISO times of one format order as strings do; the first match is the record's own field (nested texts are escaped).
  return string.match(item, '"started_at":"([^"]+)"')
end

local function keep(list, count, bytes)
  local total = tonumber(redis.call('HGET', KEYS[3], list))
  local before = redis.call('LLEN', list)
  if before == 0 then
    total = 0
  elseif not total then
    total = 0
    for _, item in ipairs(redis.call('LRANGE', list, 0, -1)) do total = total + #item end
  end
  redis.call('LPUSH', list, record)
  total = total + #record
  local len = before + 1
  while len > 1 do
    local oldest = redis.call('LINDEX', list, -1)
    local at = startedAt(oldest)
    if len <= count and total <= bytes and not (at and at < cutoff) then break end
    redis.call('RPOP', list)
    total = total - #oldest
    len = len - 1
  end
  redis.call('HSET', KEYS[3], list, total)
  redis.call('PEXPIRE', list, ARGV[8])
end

keep(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[5]))
keep(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[6]))
redis.call('PUBLISH', ARGV[4], record)
return 1
