// Reading a store's local files, one way for the folder store and the parse threads that read its files themselves.
import { readFileSync } from 'node:fs';

/** The file's text; undefined when it does not exist (or is a folder). Other errors are thrown. */
export function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') return undefined;
    throw err;
  }
}
