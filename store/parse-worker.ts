// A parse thread of store/parse-pool.ts: turns each batch of agent files into definitions or problems with the same
// parseAgentSafely the loading thread uses, and sends them back in the batch's order. Given paths (a store of local
// files), it reads the files first, as the folder store reads them (store/local-store.ts: readIfExists).
import { parentPort } from 'node:worker_threads';
import { readIfExists } from './local-files.ts';
import { parseAgentSafely, type ParsedAgent } from './parse-definition.ts';
import type { AgentFilePaths, ParseReply, ParseRequest } from './parse-pool.ts';

function readAndParse(p: AgentFilePaths): ParsedAgent | null {
  // A read error other than a missing file throws: the thread ends, and the loading thread reads the batch itself
  // (and meets the error as a load without threads would).
  const configText = readIfExists(p.configPath);
  if (configText === undefined) return null;
  return parseAgentSafely({ folder: p.folder, configFile: p.configFile, configText, promptFile: p.promptFile, promptText: readIfExists(p.promptPath) });
}

parentPort?.on('message', (req: ParseRequest) => {
  const parsed = 'raws' in req ? req.raws.map(parseAgentSafely) : req.paths.map(readAndParse);
  parentPort?.postMessage({ id: req.id, parsed } satisfies ParseReply);
});
