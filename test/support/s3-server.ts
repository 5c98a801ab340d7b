// A real S3 protocol server on loopback (s3rver), with helpers to upload a store folder into it.
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { freePort } from './free-port.ts';

export const TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3 {
  endpoint: string;
  bucket: string;
  client: S3Client;
  put(key: string, body: string): Promise<void>;
  remove(key: string): Promise<void>;
  /** Uploads every file of a folder under `prefix` (keys relative to the folder). */
  upload(dir: string, prefix: string): Promise<void>;
  /** Stops the server, keeping its data, so it can come back on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3(bucket = 'defs'): Promise<TestS3> {
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), 'warren-s3rver-'));
  let server: S3rver | undefined;
  const up = async (): Promise<void> => {
    server = new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: [{ name: bucket }] });
    await server.run();
  };
  const down = async (): Promise<void> => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.httpServer?.closeAllConnections(); // the SDK keeps connections alive; close would wait for them
    await s.close();
  };
  await up();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: TEST_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const put = async (key: string, body: string): Promise<void> => {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  };
  return {
    endpoint,
    bucket,
    client,
    put,
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async upload(dir, prefix) {
      for (const file of walk(dir)) await put(prefix + relative(dir, file).split('\\').join('/'), readFileSync(file, 'utf8'));
    },
    down,
    up,
    async close() {
      client.destroy();
      await down();
    },
  };
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}
