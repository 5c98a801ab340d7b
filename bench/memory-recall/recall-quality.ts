// Recall quality with and without memory.distill: the fixed exchanges of conversations.json told to one agent,
// then its questions asked, by keyword and by embedding_search, on SQLite; for each question, what recall puts in
// the context (max_context_items 3). Counted: questions whose current answer is recalled; questions where an
// outdated value is recalled; other people's words recalled (must be 0); characters recalled. What stands in for
// the models: the distiller's answers are the hand-written operations of conversations.json (no model runs), and
// the embeddings come from the tests' fake OpenAI-compatible server (a 64-dimension hashed bag of words, over
// real HTTP). A bench, not a test: it prints figures (`npm run bench -- memory-recall`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { AgentMemory } from '../../memory/agent-memory.ts';
import { personAudience } from '../../memory/audience.ts';
import type { DistillModel } from '../../memory/distiller.ts';
import { OpenAiEmbedder } from '../../memory/embeddings-client.ts';
import { SqliteMemoryStore } from '../../memory/sqlite-memory-store.ts';
import { AgentConfigSchema } from '../../store/agent-config.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { startFakeOpenAI } from '../../test/fakes/openai-server.ts';
import { writeResults } from '../support/stats.ts';

type Op = { op: 'add'; text: string } | { op: 'update'; of: string; text: string } | { op: 'delete'; of: string };
interface Fixture {
  sessions: Array<{ person: string; title: string; said: string; answered: string; distill: Op[] }>;
  questions: Array<{ person: string; ask: string; expect: string | null; stale: string[]; private?: string[] }>;
}

const fixture = JSON.parse(readFileSync(join(import.meta.dirname, 'conversations.json'), 'utf8')) as Fixture;
const AGENT = 'keeper';

/** The stand-in distiller: the session's written operations, `of` mapped to the short id its prompt showed. */
function cassette(): { model: DistillModel; next: (ops: Op[]) => void } {
  let ops: Op[] = [];
  const model: DistillModel = (_def, req) => {
    const shown = [...String(req.messages[1]!.content).matchAll(/^(F\d+): (.*)$/gm)].map((m) => ({ id: m[1]!, text: m[2]! }));
    const find = (of: string) => shown.find((f) => f.text.toLowerCase().includes(of.toLowerCase()))?.id;
    const operations = ops.flatMap((o): Array<Record<string, string>> => {
      if (o.op === 'add') return [o];
      const id = find(o.of);
      if (o.op === 'update') return [id ? { op: 'update', id, text: o.text } : { op: 'add', text: o.text }];
      return id ? [{ op: 'delete', id }] : [];
    });
    return Promise.resolve({ content: JSON.stringify({ operations }), usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 }, costUsd: 0 });
  };
  return { model, next: (o) => (ops = o) };
}

function agent(strategy: 'keyword' | 'embedding_search', distill: boolean): AgentDefinition {
  return {
    name: AGENT,
    config: AgentConfigSchema.parse({ name: AGENT, type: 'llm', brain: { model: 'm' }, capabilities: {}, memory: { enabled: true, distill, retrieval: { strategy, max_context_items: 3, relevance_threshold: 0.1 } } }),
    systemPrompt: '',
    files: { config: 'config.yaml', prompt: 'system-prompt.md' },
  };
}

const fake = await startFakeOpenAI({ recordRequests: false });
const rows: Array<Record<string, string | number>> = [];
try {
  for (const strategy of ['keyword', 'embedding_search'] as const) {
    for (const distill of [false, true]) {
      const store = new SqliteMemoryStore(':memory:');
      const stand = cassette();
      let clock = Date.UTC(2026, 10, 1);
      const memory = new AgentMemory({ store, redact: (t) => t, logger: pino({ level: 'silent' }), embedder: new OpenAiEmbedder({ apiBase: fake.url, model: 'hashed-64' }), distillModel: stand.model, now: () => (clock += 60_000) });
      const def = agent(strategy, distill);
      for (const [i, s] of fixture.sessions.entries()) {
        stand.next(s.distill);
        await memory.remember(def, { trigger: 'notification', notification: { id: `n${i}`, type: 'mention', from: s.person, content: `@keeper ${s.said}` }, post: { id: `p${i}`, title: s.title }, ending: { kind: 'answered', text: s.answered }, audience: personAudience(AGENT, s.person, []) }, { spent: 0 });
      }
      let answered = 0;
      let stale = 0;
      let leaked = 0;
      let chars = 0;
      for (const q of fixture.questions) {
        const texts = (await memory.recall(def, q.ask, personAudience(AGENT, q.person, []))).map((e) => e.text);
        const all = texts.join('\n');
        chars += all.length;
        if (q.expect && all.includes(q.expect)) answered++;
        if (q.stale.some((v) => all.includes(v))) stale++;
        if ((q.private ?? []).some((v) => all.includes(v))) leaked++;
      }
      const withAnswer = fixture.questions.filter((q) => q.expect).length;
      const withStale = fixture.questions.filter((q) => q.stale.length).length;
      rows.push({
        recall: strategy === 'keyword' ? 'keyword' : 'embedding_search',
        distillation: distill ? 'on' : 'off',
        'current answer recalled': `${answered} of ${withAnswer}`,
        'outdated value recalled': `${stale} of ${withStale}`,
        "other people's words": leaked,
        'characters recalled per question': Math.round(chars / fixture.questions.length),
        'entries held (current)': (await store.search(AGENT, { strategy: 'recent', limit: 1000 })).length,
      });
      await store.close();
    }
  }
} finally {
  await fake.close();
}
// Printed as the README's Markdown table.
const columns = Object.keys(rows[0]!);
console.log(`\nrecall quality, ${fixture.sessions.length} exchanges, ${fixture.questions.length} questions (SQLite, max_context_items 3)\n`);
console.log(`| ${columns.join(' | ')} |\n|${columns.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${columns.map((c) => r[c]).join(' | ')} |`);
console.log(`\nwrote ${writeResults('memory-recall', { rows })}`);
