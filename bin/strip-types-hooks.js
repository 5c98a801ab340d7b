// Module hooks for an installed warren: Node strips TypeScript types natively, but never for files under
// node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING). An installed package lives there, so its own .ts
// files are stripped here, with the same stripper Node uses (module.stripTypeScriptTypes, Node >= 22.13).
// Registered by bin/warren.js only when warren runs from a node_modules folder.
import { readFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { fileURLToPath } from 'node:url';

const packageRoot = new URL('../', import.meta.url).href;

// Node warns once per process that stripTypeScriptTypes is experimental: on every command of an installed warren,
// about a choice of warren's, not the user's. Only that warning is dropped (here, in the thread the hooks run in).
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = (warning, ...rest) => {
  const type = typeof rest[0] === 'string' ? rest[0] : rest[0]?.type;
  const text = typeof warning === 'string' ? warning : warning?.message;
  if ((type === 'ExperimentalWarning' || warning?.name === 'ExperimentalWarning') && /stripTypeScriptTypes/.test(text ?? '')) return;
  emitWarning(warning, ...rest);
};

export async function load(url, context, nextLoad) {
  if (url.startsWith(packageRoot) && url.endsWith('.ts') && !url.slice(packageRoot.length).includes('node_modules/')) {
    const source = await readFile(fileURLToPath(url), 'utf8');
    return { format: 'module', source: stripTypeScriptTypes(source), shortCircuit: true };
  }
  return nextLoad(url, context);
}
