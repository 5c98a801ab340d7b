// The fake OpenAI-compatible server in its own process (so its CPU is not the benchmark's), answering
// every request after FAKE_DELAY_MS with a short reply. Prints its URL as the first stdout line.
import { startFakeOpenAI } from '../../test/fakes/openai-server.ts';

const delay = Number(process.env.FAKE_DELAY_MS ?? 0);
const fake = await startFakeOpenAI({
  recordRequests: false,
  defaultReply: { content: 'Noted, thanks!', usage: { prompt_tokens: 200, completion_tokens: 5 }, ...(delay > 0 ? { delay_ms: delay } : {}) },
});
console.log(fake.url);
process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
