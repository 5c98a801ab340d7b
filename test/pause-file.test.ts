// The pause file (daemon/ops/pause-file.ts): an operator's pauses kept beside Redis, owner-only, replaced whole, and
// a file that cannot be read as one refused with its name and the field, never read as "nothing paused".
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PauseFile, PauseFileError } from '../daemon/ops/pause-file.ts';

const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'warren-pauses-')), 'data', 'pauses.json');

describe('the pause file', () => {
  it('records pauses and resumes, created with its folder, mode 0600, nothing left beside it', async () => {
    const path = fresh();
    const file = new PauseFile(path);
    expect(await file.read()).toEqual({});
    await Promise.all([file.set('greeter', true, new Date('2026-11-23T07:00:00Z')), file.set('scout', true, new Date('2026-11-23T07:01:00Z'))]);
    expect(await file.read()).toEqual({ greeter: { at: '2026-11-23T07:00:00.000Z' }, scout: { at: '2026-11-23T07:01:00.000Z' } });
    await file.set('greeter', true, new Date('2026-11-23T09:00:00Z')); // paused again: the first time stands
    await file.set('scout', false);
    expect(await file.read()).toEqual({ greeter: { at: '2026-11-23T07:00:00.000Z' } });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(path, '..'))).toEqual(['pauses.json']);
  });

  it.each([
    ['not JSON', '{"version": 1, "paused": ', /is unreadable: not JSON/],
    ['a wrong field', '{"version": 1, "paused": {"greeter": {"when": "x"}}}', /is unreadable: paused\.greeter/],
    ['another version', '{"version": 2, "paused": {}}', /is unreadable: version/],
  ])('refuses %s, naming the file', async (_what, text, message) => {
    const path = fresh();
    await new PauseFile(path).set('x', false); // creates the folder
    writeFileSync(path, text);
    const err = await new PauseFile(path).read().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PauseFileError);
    expect((err as PauseFileError).message).toMatch(message);
    expect((err as PauseFileError).message).toContain(path);
  });
});
