// Log lines pass the daemon's redaction at the output, whatever a call site logged: an Error object whose message
// carries a key, a field nobody thought of. (The daemon sets the redaction as soon as its Redactor exists.)
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, redactLogs } from '../../daemon/logger.ts';
import { Redactor } from '../../services/redact.ts';

afterEach(() => redactLogs(undefined));

describe('log redaction', () => {
  it('an error logged raw, a nested field and a message all come out redacted', async () => {
    const canary = 'log-canary-7e3f1a9c5b2d';
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (c: Buffer) => lines.push(c.toString()));
    const logger = createLogger({ level: 'debug', destination: out });
    const redactor = new Redactor([canary]);
    redactLogs((line) => redactor.redact(line));
    logger.warn({ err: new Error(`upstream said: invalid key ${canary}`) }, 'model call failed');
    logger.info({ deep: { note: `x=${canary}` } }, `and in the message ${canary}`);
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      expect(l).not.toContain(canary);
      expect(l).toContain('[REDACTED]');
      expect(() => JSON.parse(l) as unknown).not.toThrow();
    }
  });
});
