// Opens the definitions store warren.yaml (or `warren validate <dir|s3://…>`) points at.
import type { DefinitionStore } from '../store/definition.ts';
import { LayeredStore } from '../store/layered-store.ts';
import { LocalFolderStore, type StoreLogger } from '../store/local-store.ts';
import { parseS3Url } from '../store/s3-location.ts';
import type { WarrenConfig } from './config.ts';

export type StoreSettings = WarrenConfig['store'];

/**
 * `target` overrides the configured location: a folder path or an `s3://bucket/prefix` URL. `logger`: where a
 * watched folder says that its check's interval stretched with its size.
 */
export async function openStore(settings: StoreSettings, env: NodeJS.ProcessEnv, target?: string, logger?: StoreLogger): Promise<DefinitionStore & { close?: () => void }> {
  const main = await openOne(settings, env, target, logger);
  // `store.include`: folders read with the configured store (not with an explicit target, which is the whole store).
  if (target !== undefined || settings.include.length === 0) return main;
  return new LayeredStore([...settings.include.map((dir) => new LocalFolderStore(dir, { checkIntervalMs: settings.check_interval, logger })), main]);
}

async function openOne(settings: StoreSettings, env: NodeJS.ProcessEnv, target: string | undefined, logger: StoreLogger | undefined): Promise<DefinitionStore & { close?: () => void }> {
  const url = target ?? (settings.type === 's3' ? settings.url : undefined);
  if (url === undefined || !url.startsWith('s3://')) return new LocalFolderStore(target ?? settings.path, { checkIntervalMs: settings.check_interval, logger });
  const location = parseS3Url(url);
  if (!location) throw new Error(`not an S3 location: ${url} (expected s3://bucket/prefix)`);
  const accessKeyId = env[settings.access_key_id_env];
  const secretAccessKey = env[settings.secret_access_key_env];
  // The AWS SDK is megabytes of live heap: loaded only for an S3 store.
  const { S3Store } = await import('../store/s3-store.ts');
  return new S3Store({
    location,
    endpoint: settings.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL,
    region: settings.region,
    forcePathStyle: settings.force_path_style,
    // Without both variables the SDK's own chain (profile, instance role) is used.
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    defaultTtlMs: settings.cache_ttl,
    pollIntervalMs: settings.poll_interval,
  });
}
