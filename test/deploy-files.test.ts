// docker-compose.yml and the Dockerfile cannot be run here (no Docker engine), so their structure is checked.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

interface Service { image?: string; build?: unknown; command?: string[]; depends_on?: Record<string, unknown>; volumes?: string[]; environment?: Record<string, string> }

describe('deployment files', () => {
  it('docker-compose.yml declares redis, minio, the hub and warren consistently', () => {
    const doc = parse(readFileSync('docker-compose.yml', 'utf8'), { uniqueKeys: true }) as { services: Record<string, Service>; volumes?: Record<string, unknown> };
    expect(Object.keys(doc.services).sort()).toEqual(['hub', 'minio', 'redis', 'warren']);
    for (const [name, s] of Object.entries(doc.services)) {
      expect(s.image ?? s.build, `${name} needs image or build`).toBeTruthy();
      for (const dep of Object.keys(s.depends_on ?? {})) expect(doc.services, `${name} depends on ${dep}`).toHaveProperty(dep);
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0]!;
        if (!source.startsWith('.') && !source.startsWith('/')) expect(doc.volumes, `volume ${source}`).toHaveProperty(source);
      }
    }
    expect(doc.services.warren?.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(doc.services.hub?.command?.[0]).toBe('hub');
  });

  it('the Dockerfile builds on node:24-slim and runs the warren entry point', () => {
    const text = readFileSync('Dockerfile', 'utf8');
    expect(text).toMatch(/^FROM node:24-slim$/m);
    expect(text).toMatch(/ENTRYPOINT \["node", "bin\/warren\.js"\]/);
  });
});
