// What the daemon that runs the agents tells its embedded hub's watch page: each agent's live state (the same
// reading as `warren status`, daemon/ops/agent-statuses.ts) and pause/resume. A hub started on its own
// (`warren hub`) has no daemon beside it: the page then shows the hub's own figures only.

/** One agent as the daemon sees it now. */
export interface FleetAgent {
  name: string;
  /** ready, running, paused, quiet_hours, backoff, failing, skipped, name_taken (daemon/ops/status.ts). */
  state: string;
  /** Why skipped, until when, how many failed or abandoned; null when nothing goes with the state. */
  state_detail: string | null;
  /** The activation running now, and what it does (`step 2/10 → hub_search`). */
  running: { trigger: string; started_at: string; doing: string } | null;
  /** Null when the agent does not remember. */
  memory: { entries: number; bytes: number; newest: Array<{ text: string; kind: string; created_at: string }> } | null;
  /** What the daemon runs vs the definition file on disk (filled by daemon/ops/fleet-source.ts). */
  definition?: { hash: string; loaded_at: string; differs_on_disk: boolean } | null;
  /** Mentions held without running, with why and when they will run (filled by daemon/ops/fleet-source.ts). */
  held?: { notification_id?: string; reason: string; runs_at: string | null }[];
  /** Its schedules: cron, zone, the next tick and the last one queued (filled by daemon/ops/fleet-source.ts). */
  schedules?: { name: string; cron: string; timezone: string; next_at: string; last_at: string | null }[];
}

/** What the daemon knows of its own health, for the page's outage banners (watch/outages.ts). */
export interface FleetHealth {
  /** Null when Redis answers; else why not. */
  redis: string | null;
  /** Agent definitions that failed to load (`warren validate` lists them). */
  definitions_with_errors: number;
}

/** An approval request as the page shows it (README "Approvals"). */
export interface FleetApproval {
  id: string;
  agent: string;
  created_at: string;
  expires_at: string;
  /** The calls that wait: arguments as JSON text, redacted and capped. */
  calls: Array<{ name: string; arguments: string }>;
  status: 'waiting' | 'approved' | 'denied';
  decided_by: string | null;
  note: string | null;
  /** What waits: a paused run (`loop`), a CLI agent's held hub write (`hub_write`), a proposed new agent (`spawn`). */
  kind: 'loop' | 'hub_write' | 'spawn';
  /** A proposed agent: its name, template and purpose. */
  spawn?: { name: string; template: string; purpose: string };
  /** On a decision's answer only: the request was decided before, and `status` is that first decision. */
  already?: boolean;
}

/** A decision the daemon refused: 404 no such request waiting, 403 this approver is not one the agent takes. */
export class ApprovalRefused extends Error {
  readonly status: 403 | 404;
  constructor(status: 403 | 404, message: string) {
    super(message);
    this.status = status;
    this.name = 'ApprovalRefused';
  }
}

/** An A2A task an agent serves, as the page's "Served tasks" section shows it (README "Talking to other agents (A2A)"). */
export interface FleetA2ATask {
  id: string;
  agent: string;
  caller: string;
  /** submitted, working, completed, failed, canceled, rejected… */
  state: string;
  created_at: string;
  updated_at: string;
  /** How long it took, or has been open so far. */
  took_ms: number;
  open: boolean;
  /** What its status says (why it waits, was refused or failed); '' when nothing. */
  said: string;
}

export interface FleetSource {
  agents(): Promise<FleetAgent[]>;
  /** As `warren pause` / `warren resume` do it; rejects with UnknownAgentError for a name the daemon does not define. */
  setPaused(agent: string, paused: boolean): Promise<void>;
  /** Redis and the definitions as the daemon sees them now; may reject or hang (the caller bounds it). Absent: nothing known. */
  health?(): Promise<FleetHealth>;
  /** Approval requests not yet carried out, and a decision as the operator (rejects with ApprovalRefused). Absent: none here. */
  approvals?: {
    list(): Promise<FleetApproval[]>;
    decide(id: string, decision: 'approve' | 'deny', note: string): Promise<FleetApproval>;
  };
  /** The newest A2A tasks the agents served, newest first. Absent: none here. */
  a2aTasks?(): Promise<FleetA2ATask[]>;
}

export class UnknownAgentError extends Error {
  readonly agent: string;
  constructor(agent: string) {
    super(`no agent named "${agent}" is defined`);
    this.agent = agent;
    this.name = 'UnknownAgentError';
  }
}
