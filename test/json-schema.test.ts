import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_SCHEMA_FILE, agentConfigJsonSchema } from '../store/json-schema.ts';

describe('agent config JSON Schema', () => {
  it('is committed and current (run `npm run schema` after changing store/agent-config.ts)', () => {
    expect(readFileSync(AGENT_SCHEMA_FILE, 'utf8')).toBe(agentConfigJsonSchema());
  });

  it('describes the required keys and rejects unknown ones, as the zod schema does', () => {
    const schema = JSON.parse(agentConfigJsonSchema()) as { required: string[]; additionalProperties: boolean; properties: Record<string, unknown> };
    expect(schema.required).toEqual(['name', 'type', 'brain', 'capabilities']);
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toContain('behavior');
  });
});
