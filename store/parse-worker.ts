// A parse thread of store/parse-pool.ts: turns each batch of agent files into definitions or problems with the same
// parseAgentSafely the loading thread uses, and sends them back in the batch's order.
import { parentPort } from 'node:worker_threads';
import { parseAgentSafely } from './parse-definition.ts';
import type { ParseReply, ParseRequest } from './parse-pool.ts';

parentPort?.on('message', (req: ParseRequest) => {
  parentPort?.postMessage({ id: req.id, parsed: req.raws.map(parseAgentSafely) } satisfies ParseReply);
});
