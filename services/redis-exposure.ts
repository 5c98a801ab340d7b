// At start-up, when CLI agents run as their own user: can that user command warren's Redis? Redis that answers a
// client without credentials is an open control plane: an agent's user could rewrite the daily counters, pauses,
// backoffs, the leader lease and the queue, and every limit "enforced at every write" would be void. Such a daemon
// does not start its CLI agents (the LLM agents run on); redis.allow_unauthenticated is the single-user opt-out.
import type { Logger } from 'pino';
import type { CredentiallessAnswer } from '../redis/connect.ts';
import { userCan, type CliUser } from '../executors/cli/run-as.ts';
import type { WarrenConfig } from './config.ts';

export interface ExposureFacts {
  /** What Redis answered a client without credentials. */
  answer: CredentiallessAnswer;
  /** Whether the CLI user can connect to the Unix socket warren uses; undefined on TCP (anyone on the host can). */
  socketReachable: boolean | undefined;
  /** `redis.password_file`, when the CLI user can read it (the credentials are then theirs too). */
  readablePasswordFile: string | undefined;
  allowUnauthenticated: boolean;
  /** Where Redis is, without passwords; and who CLI agents run as. */
  where: string;
  user: string;
}

export type Exposure = { refuse: false; warning?: string } | { refuse: true; reason: string };

const FIX = 'set requirepass (or an ACL user) on Redis and give warren the credentials in REDIS_URL (redis://<user>:<password>@<host>:<port>) or in redis.password_env / redis.password_file (with redis.username for an ACL user)';
const OPT_OUT = 'for single-user development only, redis.allow_unauthenticated: true (or WARREN_ALLOW_OPEN_REDIS=1) runs them anyway';

/** The one decision whether CLI agents may run beside this Redis. */
export function redisExposure(f: ExposureFacts): Exposure {
  const can = `CLI agents (running as ${f.user}) could rewrite warren's state in it: daily limits, pauses, backoffs, the leader lease, queued jobs`;
  let open: string | undefined;
  if (f.readablePasswordFile) open = `redis.password_file ${f.readablePasswordFile} is readable by ${f.user}, so ${can}. Make it readable by the daemon's user only (chmod 600)`;
  else if (f.answer.kind === 'answers' && f.socketReachable !== false) open = `Redis at ${f.where} answers without credentials, so ${can}. To fix: ${FIX}`;
  if (open === undefined) {
    if (f.answer.kind === 'unreachable') return { refuse: false, warning: `could not check whether Redis at ${f.where} takes commands without credentials (${f.answer.reason}); CLI agents start, and are safe only when it does not` };
    return { refuse: false };
  }
  if (f.allowUnauthenticated) return { refuse: false, warning: `${open}. redis.allow_unauthenticated is set, so CLI agents run anyway` };
  return { refuse: true, reason: `${open}. CLI agents are not started; ${OPT_OUT}` };
}

/**
 * The facts, read: a PING without credentials, the socket's and the password file's permissions for `user` (a
 * user not created yet, as `warren doctor` may find it: named only, its permissions taken as another user's).
 */
export async function readRedisExposure(config: WarrenConfig, user: CliUser | { name: string }): Promise<Exposure> {
  const { describeRedis, pingWithoutCredentials } = await import('../redis/connect.ts');
  const { parseRedisUrl } = await import('../redis/connection-options.ts');
  const socket = config.redis.cluster ? undefined : parseRedisUrl(config.redis.url).path;
  const passwordFile = config.redis.password_file;
  const real = 'uid' in user ? user : undefined;
  return redisExposure({
    answer: await pingWithoutCredentials(config.redis),
    // Connecting to a Unix socket takes write permission on it (and passage through its folders).
    socketReachable: socket === undefined || !real ? undefined : userCan(real, socket, ['-w']),
    readablePasswordFile: passwordFile !== undefined && real && userCan(real, passwordFile, ['-r']) ? passwordFile : undefined,
    allowUnauthenticated: config.redis.allow_unauthenticated,
    where: describeRedis(config.redis),
    user: user.name,
  });
}

/** At start: the exposure read and logged; the reason CLI agents are not started, or undefined when they may. */
export async function checkRedisExposure(config: WarrenConfig, user: CliUser, logger: Logger): Promise<string | undefined> {
  const exposure = await readRedisExposure(config, user);
  if (exposure.refuse) {
    logger.error(exposure.reason);
    return exposure.reason;
  }
  if (exposure.warning) logger.warn(exposure.warning);
  return undefined;
}
