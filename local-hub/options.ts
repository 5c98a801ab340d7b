// Options of the local hub (see server.ts for the entry point).
import type { Logger } from 'pino';
import type { BudgetConfig } from './budget-rules.ts';
import type { HubFaults } from './faults.ts';
import type { WatchPolicy } from './watch/access.ts';
import type { FleetSource } from './watch/fleet.ts';

export interface HubServerOptions {
  /** SQLite file (default `./data/hub.sqlite`; its folder is created), or `:memory:`. */
  dbPath?: string;
  /** Admin (service) key; generated when absent (the caller prints it). Kept only as a digest. */
  adminKey?: string;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 7070; 0 picks a free port. */
  port?: number;
  logger?: Logger;
  /** Upper bound for the long-poll's `timeout` in seconds (default 60). */
  maxPollSeconds?: number;
  /** Request bodies above this many bytes get 413 (default 1 MiB). */
  maxBodyBytes?: number;
  /** Budget limits and thresholds for `GET /system/budget-health`. */
  budget?: BudgetConfig;
  /** Test switches; also reachable (and changeable while running) as `faults` on the running hub. */
  faults?: HubFaults;
  /** Who may open the watch page at `/` (default `loopback`: this machine only). */
  watch?: WatchPolicy;
  /** Networks (CIDR) whose clients count as this machine for `watch: 'loopback'` (a container bridge). */
  watchNetworks?: string[];
  /** The watch page's operator token; without it (and without `watchTokenFile`) one is generated for this run. */
  watchToken?: string;
  /** Where the operator token is kept across restarts (created 0600 when missing; watch/operator-token.ts). */
  watchTokenFile?: string;
  /** Called once at start with the operator link (`/?token=…`), unless the page is off. */
  onWatchLink?: (link: string) => void;
  /** More names the hub is reached by (e.g. `hub.example.lan`): the watch page refuses any other Host. */
  watchHosts?: string[];
  /** The daemon beside this hub: each agent's live state and pause/resume for the watch page (watch/fleet.ts). */
  fleet?: FleetSource;
}
