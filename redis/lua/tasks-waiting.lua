-- Of the agents with tasks, those with more tasks nobody holds (or whose holder's claim lapsed) than `task` jobs
-- already on their way to claim one: the ones to activate.
-- A `task` job on its way is the job holding the agent's BullMQ deduplication id while it has not claimed a task yet
-- (waiting, or started and not at its claim: the activation's first steps come before it), and the follow-up
-- BullMQ keeps behind a running job. Without counting them, a round that met a run between its start and its claim
-- queued a follow-up that found nothing (an empty `task` activation after each tick).
-- KEYS[1] agents-with-tasks set  ARGV[1] pending zset prefix  ARGV[2] claims hash prefix  ARGV[3] now (ms)
-- ARGV[4] BullMQ's job hash prefix  ARGV[5] its deduplication key prefix (current job)  ARGV[6] its kept follow-up
-- key prefix  ARGV[7] the task job name. Keys are made here from the prefixes (one hash tag: one slot on a cluster).
local now = tonumber(ARGV[3])
local out = {}
for _, agent in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local ids = redis.call('ZRANGE', ARGV[1] .. agent, 0, -1)
  if #ids == 0 then
    redis.call('SREM', KEYS[1], agent)
  else
    local claims = ARGV[2] .. agent
    local free = 0
    for _, id in ipairs(ids) do
      local c = redis.call('HGET', claims, id)
      local untilMs = c and string.match(c, '|(%d+)|%d+$')
      if not c or tonumber(untilMs) <= now then free = free + 1 end
    end
    local coming = 0
    if free > 0 then
      local job = redis.call('GET', ARGV[5] .. agent)
      if job and redis.call('HGET', ARGV[4] .. job, 'name') == ARGV[7] then
        -- Its activation id is "act-<job id>-<…>" (scheduler/activation-job.ts): has it claimed a task yet?
        local mine = 'act-' .. job .. '-'
        local claimed = false
        for _, c in ipairs(redis.call('HVALS', claims)) do
          if string.sub(c, 1, #mine) == mine then
            claimed = true
            break
          end
        end
        if not claimed then coming = coming + 1 end
      end
      if redis.call('HGET', ARGV[6] .. agent, 'name') == ARGV[7] then coming = coming + 1 end
    end
    if free > coming then out[#out + 1] = agent end
  end
end
return out
