// A secret a definition points at (`secret_env` or `secret_file`: webhook secrets, outbound event secrets): read
// when it is needed, so a rotated file or a reloaded secrets.dir takes effect without a restart.
import { readFileSync, statSync } from 'node:fs';
import type { SecretSource } from './secrets.ts';

export interface SecretRef {
  secret_env?: string;
  secret_file?: string;
}

const MAX_SECRET_BYTES = 64 * 1024;

/** The secret's value, or undefined when its variable is unset or its file missing, empty or too large. */
export function readSecretRef(ref: SecretRef, secrets: Pick<SecretSource, 'get'>): string | undefined {
  if (ref.secret_env !== undefined) return secrets.get(ref.secret_env);
  if (ref.secret_file === undefined) return undefined;
  try {
    if (statSync(ref.secret_file).size > MAX_SECRET_BYTES) return undefined;
    return readFileSync(ref.secret_file, 'utf8').replace(/\s+$/, '') || undefined;
  } catch {
    return undefined;
  }
}

/** Where the secret was to come from, for an error message (never its value). */
export function describeSecretRef(ref: SecretRef): string {
  return ref.secret_env !== undefined ? `variable ${ref.secret_env} (or ${ref.secret_env}_FILE, or secrets.dir)` : `file ${ref.secret_file}`;
}
