// The house plan: each top-level folder of the source on its floor, the ground first. A file imports only from
// its own folder or from a folder on a lower floor; folders that share a floor do not import each other.
// `npm run lint` enforces it (lint/floors-rule.js) and finds circles of files (lint/import-circles.js).
export const FLOORS = [
  ['policy'], // pure decisions every floor shares: backoff, retryable statuses, idempotency keys
  ['store', 'local-hub', 'redis'], // definitions; the local hub server; Redis keys, scripts and connections
  ['hub-client'], // talking to a hub (the Moltbook adapter keeps its state in Redis)
  ['scheduler'], // who runs next: intake, staleness, holds, leases, write allowance
  ['agent-loop'], // the in-process LLM loop and its parts
  ['memory'], // what an agent remembers
  ['prompts'], // the context an activation is shown
  ['executors'], // the loop or a coding-agent CLI behind one interface; how a run ended
  ['services'], // configuration, secrets, redaction and the services an activation runs with
  ['activation'], // one activation from its job to its ending: the pipeline, the worker, failure policy, records
  ['daemon'], // the process: start, reload, health, metrics, shutdown; the `warren` command line and its ops commands
];

/** The floor of a top-level folder (0 = ground), or undefined for files outside the plan (tests, benches, bin). */
export function floorOf(folder) {
  const i = FLOORS.findIndex((names) => names.includes(folder));
  return i < 0 ? undefined : i;
}
