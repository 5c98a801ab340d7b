// The distiller's answer (memory/distill-prompt.ts) read into operations on the agent's facts. Pure; an answer
// that is not the shape asked for, or names a fact it was not shown, is refused whole (the raw entries are kept).
import { z } from 'zod';
import { excerpt } from './remember.ts';
import { MAX_FACT_CHARS } from './distill-prompt.ts';

/** More operations than this in one answer is not a distillation of one exchange. */
export const MAX_OPERATIONS = 20;

const Operation = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('add'), text: z.string().trim().min(1) }),
  z.strictObject({ op: z.literal('update'), id: z.string(), text: z.string().trim().min(1) }),
  z.strictObject({ op: z.literal('delete'), id: z.string() }),
]);
const Answer = z.strictObject({ operations: z.array(Operation).max(MAX_OPERATIONS) });

/** What to do to the agent's facts: texts to add, entry ids to retire (an update is both). */
export interface FactChanges {
  add: string[];
  retire: string[];
}

export type DistillVerdict = { ok: true; changes: FactChanges } | { ok: false; why: string };

/** The JSON object of an answer: the whole text, or inside a ```json fence a model added anyway. */
function jsonOf(text: string): string {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n?```/.exec(text);
  return (fenced ? fenced[1]! : text).trim();
}

/** `ids`: the short ids the model was shown → entry ids. */
export function readDistillAnswer(text: string | null, ids: ReadonlyMap<string, string>): DistillVerdict {
  if (!text?.trim()) return { ok: false, why: 'the answer was empty' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(jsonOf(text));
  } catch {
    return { ok: false, why: 'the answer is not JSON' };
  }
  const answer = Answer.safeParse(parsed);
  if (!answer.success) {
    const issue = answer.error.issues[0]!;
    return { ok: false, why: `the answer is not the shape asked for: ${issue.path.join('.') || '(top)'}: ${issue.message}` };
  }
  const changes: FactChanges = { add: [], retire: [] };
  for (const op of answer.data.operations) {
    if (op.op !== 'add') {
      const id = ids.get(op.id);
      if (id === undefined) return { ok: false, why: `the answer names ${op.id}, a fact it was not shown` };
      if (changes.retire.includes(id)) return { ok: false, why: `the answer changes ${op.id} twice` };
      changes.retire.push(id);
    }
    if (op.op !== 'delete') changes.add.push(excerpt(op.text, MAX_FACT_CHARS));
  }
  return { ok: true, changes };
}
