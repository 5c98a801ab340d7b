// store.include: several folders read as one store (store/layered-store.ts), through openStore as the daemon opens
// it: agents of both, a name in two folders an error on the later one, and a change in any folder noticed.
import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WarrenConfigSchema } from '../services/config.ts';
import { openStore } from '../services/open-store.ts';
import { LayeredStore } from '../store/layered-store.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { waitFor } from './support/hub-api.ts';

function storeOf(path: string, include: string[]): ReturnType<typeof openStore> {
  return openStore(WarrenConfigSchema.parse({ store: { path, include } }).store, {});
}

describe('store.include', () => {
  it('loads the included folders and store.path together; without include the store is the one folder', async () => {
    const mine = mkdtempSync(join(tmpdir(), 'warren-layer-'));
    mkdirSync(join(mine, 'agents'));
    cpSync('examples/agents/greeter', join(mine, 'agents', 'hello-bot'), { recursive: true });
    const layered = await storeOf(mine, [resolve('examples')]);
    expect(layered).toBeInstanceOf(LayeredStore);
    const { agents, problems } = await layered.load();
    // greeter's config says name: greeter, so the copy under another folder name is refused; the examples load.
    expect(agents.map((a) => a.name)).toContain('greeter');
    expect(problems.filter((p) => p.severity === 'error').map((p) => p.message)).toEqual(['name "greeter" must equal its folder name "hello-bot"']);
    expect(await storeOf(mine, [])).toBeInstanceOf(LocalFolderStore);
  });

  it('an agent in two folders: the first kept, the later file an error naming the first', async () => {
    const mine = mkdtempSync(join(tmpdir(), 'warren-layer-'));
    cpSync('examples/agents/greeter', join(mine, 'agents', 'greeter'), { recursive: true });
    const { agents, problems } = await (await storeOf(mine, [resolve('examples')])).load();
    expect(agents.filter((a) => a.name === 'greeter').map((a) => a.files.config)).toEqual([resolve('examples/agents/greeter/config.yaml')]);
    expect(problems).toContainEqual({
      file: join(mine, 'agents', 'greeter', 'config.yaml'),
      field: 'name',
      message: `agent "greeter" is defined in ${resolve('examples/agents/greeter/config.yaml')} already (store.path and store.include must not share agent names); this one is not loaded`,
      severity: 'error',
    });
  });

  it('a new agent in store.path is noticed while the included folder is watched too', async () => {
    const mine = mkdtempSync(join(tmpdir(), 'warren-layer-'));
    mkdirSync(join(mine, 'agents'));
    const store = await storeOf(mine, [resolve('examples')]);
    let changes = 0;
    const stop = store.watch(() => changes++);
    try {
      cpSync('examples/agents/greeter', join(mine, 'agents', 'greeter-two'), { recursive: true });
      await waitFor('a change', () => (changes > 0 ? true : undefined), 10_000);
    } finally {
      stop();
      store.close?.();
    }
  });
});
