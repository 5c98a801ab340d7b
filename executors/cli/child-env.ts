// The environment of a CLI child: built from an allow-list plus what the agent declares, never by spreading
// the daemon's environment (the original leaked every daemon secret into its CLIs this way).

/** Variables a CLI needs to behave like a normal program, and nothing secret. */
export const BASE_ENV_ALLOW: readonly string[] = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'TERM', 'USER', 'LOGNAME', 'SHELL', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS', 'NO_COLOR'];

/** Never passed, whatever is declared: a claude child that sees these refuses to start "inside another session". */
export const NEVER_PASS: readonly string[] = ['CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT'];

export interface ChildEnvSpec {
  /** Names copied from the parent when set there (on top of BASE_ENV_ALLOW). */
  allow?: readonly string[];
  /** Values set by the executor (keys under the CLI's own variable names, endpoints, hygiene switches). */
  set?: Readonly<Record<string, string | undefined>>;
}

export function buildChildEnv(parent: Readonly<Record<string, string | undefined>>, spec: ChildEnvSpec = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV_ALLOW, ...(spec.allow ?? [])]) {
    const v = parent[name];
    if (v !== undefined) env[name] = v;
  }
  for (const [name, v] of Object.entries(spec.set ?? {})) if (v !== undefined) env[name] = v;
  for (const name of NEVER_PASS) delete env[name];
  return env;
}
