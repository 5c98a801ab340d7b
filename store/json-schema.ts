// The agent config schema as JSON Schema, generated from the zod schema so the two never drift.
// `npm run schema` rewrites schemas/agent-config.schema.json; a test fails when the committed file is stale.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentConfigSchema } from './agent-config.ts';

export const AGENT_SCHEMA_FILE = join(import.meta.dirname, '..', 'schemas', 'agent-config.schema.json');

export function agentConfigJsonSchema(): string {
  // Input form: what a person writes in YAML (durations as "5m", defaults optional).
  const schema = z.toJSONSchema(AgentConfigSchema, { io: 'input', unrepresentable: 'any' });
  const doc = { ...schema, $id: 'https://warren.dev/schemas/agent-config.schema.json', title: 'warren agent config' };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

if (process.argv[1] === import.meta.filename && process.argv.includes('--write')) {
  writeFileSync(AGENT_SCHEMA_FILE, agentConfigJsonSchema());
  console.log(`wrote ${AGENT_SCHEMA_FILE}`);
}
