// `warren init`: a warren.yaml and one example agent in a folder, so an installed warren runs at once;
// `warren init agent <name>`: a new agent folder in the store of warren.yaml (store.path, never store.include:
// in the repository that is ./definitions, which git ignores, not the shipped examples/) that `warren validate` accepts.
// Existing files are never overwritten.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { AGENT_NAME } from '../../store/agent-config.ts';
import { loadWarrenConfig } from '../../services/config.ts';

const PACKAGE_ROOT = resolve(import.meta.dirname, '..', '..');
const SCHEMA_FILE = join(PACKAGE_ROOT, 'schemas', 'agent-config.schema.json');
const EXAMPLE_AGENT = join(PACKAGE_ROOT, 'examples', 'agents', 'greeter');

export class InitError extends Error {
  override readonly name = 'InitError';
}

/** The warren.yaml `warren init` writes: the embedded hub, agents from ./definitions, Redis on loopback. */
export const INIT_WARREN_YAML = `# warren's settings (every key: the README's Configuration section). \`npx warren start\` runs the local hub,
# the agents of ./definitions and the daemon in one process; it needs Redis on 127.0.0.1:6379 (REDIS_URL overrides).
hub:
  embedded: true              # serve the local hub in this process; its watch page is http://127.0.0.1:7070/
  port: 7070                  # WARREN_HUB_PORT overrides
  db: ./data/hub.sqlite
redis:
  url: redis://127.0.0.1:6379
store:
  type: local
  path: ./definitions         # agents/<name>/config.yaml and system-prompt.md
budget:                       # USD the hub lets agents spend (0 = unlimited)
  daily_usd: 0
  fleet: {daily_usd: 0, monthly_usd: 0}
metrics:
  port: 9464                  # /healthz, /readyz, /metrics; WARREN_METRICS_PORT overrides
`;

/** A new agent's config.yaml: runs without a key (scripted), with the lines that switch it to a real model. */
export function agentConfigTemplate(name: string, schemaPath: string): string {
  return `# yaml-language-server: $schema=${schemaPath}
# Every key: docs/agent-config.md. Check it with \`npx warren validate\`.
version: "1.0.0"
name: ${name}                  # = the folder name
description: Describe what ${name} does; the model sees this.
type: llm
brain:
  # A scripted model answers from canned replies and needs no key. For a real model:
  #   provider: openai
  #   model: gpt-4o-mini
  #   api_key_env: OPENAI_API_KEY     # the NAME of the variable holding the key
  #   exploration_model: gpt-4o-mini  # optional: a cheaper model for explorations
  provider: scripted
  model: scripted-${name}
  responses:
    - "Hello from ${name}!"
capabilities:
  grants: [hub:read, hub:write]
behavior:
  respond_to_mentions: true
  respond_to_replies: true
  max_iterations: 5
`;
}

export function registerInitCommand(program: Command): void {
  const init = program
    .command('init')
    .description('create a warren.yaml and one example agent in a folder (default: here)')
    .argument('[dir]', 'the folder', '.')
    .action((dir: string) => {
      for (const line of initProject(resolve(dir))) console.log(line);
    });
  init
    .command('agent')
    .description('create a new agent folder in the store folder of warren.yaml (store.path)')
    .argument('<name>', '3–50 lowercase letters, digits and inner dashes')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .action((name: string, opts: { config: string }) => {
      const store = loadWarrenConfig(opts.config).store;
      if (store.type !== 'local') throw new InitError(`the store of ${opts.config} is ${store.url ?? 's3'}: create the agent in a folder and upload it (see "The definitions store")`);
      console.log(initAgent(store.path, name));
    });
}

/** Writes warren.yaml and definitions/agents/greeter/ into `dir`; returns what it did, a line each. */
export function initProject(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const done: string[] = [];
  const yaml = join(dir, 'warren.yaml');
  if (existsSync(yaml)) done.push('warren.yaml exists: left as it is');
  else {
    writeFileSync(yaml, INIT_WARREN_YAML);
    done.push('created warren.yaml');
  }
  const agent = join(dir, 'definitions', 'agents', 'greeter');
  if (existsSync(agent)) done.push('definitions/agents/greeter exists: left as it is');
  else {
    mkdirSync(agent, { recursive: true });
    cpSync(join(EXAMPLE_AGENT, 'system-prompt.md'), join(agent, 'system-prompt.md'));
    const config = readFileSync(join(EXAMPLE_AGENT, 'config.yaml'), 'utf8').replace(/^# yaml-language-server: \$schema=.*$/m, `# yaml-language-server: $schema=${relative(agent, SCHEMA_FILE)}`);
    writeFileSync(join(agent, 'config.yaml'), config);
    done.push('created definitions/agents/greeter (answers mentions without a key)');
  }
  done.push('next: npx warren validate, then npx warren start (needs Redis on 127.0.0.1:6379) and open http://127.0.0.1:7070/');
  return done;
}

/** Writes <store>/agents/<name>/{config.yaml,system-prompt.md}; returns the line to print. */
export function initAgent(storePath: string, name: string): string {
  if (!AGENT_NAME.test(name) || name.length < 3 || name.length > 50) throw new InitError(`"${name}" is not an agent name: 3–50 lowercase letters, digits and inner dashes`);
  const dir = join(storePath, 'agents', name);
  if (existsSync(dir)) throw new InitError(`${relative(process.cwd(), dir) || dir} exists already: choose another name`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.yaml'), agentConfigTemplate(name, relative(dir, SCHEMA_FILE)));
  writeFileSync(join(dir, 'system-prompt.md'), 'You are {{name}}. {{description}}\n\nAnswer briefly and kindly.\n');
  return `created ${relative(process.cwd(), dir) || dir}: edit config.yaml and system-prompt.md, then npx warren validate`;
}
