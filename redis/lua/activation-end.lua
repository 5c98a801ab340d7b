-- The end of an activation that finished, its parts in one command: the agent's state (record-activated.lua; absent
-- for a skipped run), the activation's record (add-activation-record.lua), for a run whose answer was its last write
-- the answer dropped from the reply outbox (outbox-drop.lua; its claim is let go of next, so it needs no settling of
-- its own), for a notification run the release of its inbox claim (inbox-release.lua), and the budget status the run
-- read (budget-seen.lua; absent when the hub did not say). Each part runs as it does alone, in that order; the outbox
-- goes before the release, as in reply-after.lua: a lost claim still leaves no answer behind.
-- ARGV[1..10] how many keys and arguments each part has (state, record, outbox, release, budget; 0 for an absent
-- part), then each part's keys in KEYS and its arguments in ARGV, in that order.
-- Returns {what record-activated answered (nil when absent), what inbox-release answered (nil when absent)}.
local function part(from, n, list)
  local out = {}
  for i = 1, n do out[i] = list[from + i - 1] end
  return out
end
local k, a = 1, 11
local function run(fn, nk, na)
  local keys, args = part(k, nk, KEYS), part(a, na, ARGV)
  k, a = k + nk, a + na
  return fn(keys, args)
end
local activated, released = false, false
local n = {}
for i = 1, 10 do n[i] = tonumber(ARGV[i]) end
if n[1] > 0 then activated = run(record_activated, n[1], n[2]) end
run(add_activation_record, n[3], n[4])
if n[5] > 0 then run(outbox_drop, n[5], n[6]) end
if n[7] > 0 then released = run(inbox_release, n[7], n[8]) end
if n[9] > 0 then run(budget_seen, n[9], n[10]) end
return {activated, released}
