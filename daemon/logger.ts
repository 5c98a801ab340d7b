// pino everywhere: JSON lines for machines, pretty only when a person watches a terminal.
import type { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

let redactLine: ((line: string) => string) | undefined;

/**
 * Every log line passes this redaction from now on (the daemon's Redactor, set once it is built): an error
 * message or a value logged anywhere can carry a secret, and one pass at the output catches every call site.
 */
export function redactLogs(redact: ((line: string) => string) | undefined): void {
  redactLine = redact;
}

export function createLogger(opts: { level?: string; pretty?: boolean; destination?: Writable } = {}): Logger {
  const level = opts.level ?? process.env.WARREN_LOG_LEVEL ?? 'info';
  const pretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY);
  return pino(
    {
      level,
      base: undefined,
      // Belt and braces: fields that could carry credentials never reach a log line.
      redact: { paths: ['apiKey', 'api_key', 'adminKey', '*.apiKey', '*.api_key', 'headers.authorization', '*.headers.authorization'], censor: '[redacted]' },
      hooks: { streamWrite: (line) => (redactLine ? redactLine(line) : line) },
      transport: pretty ? { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } : undefined,
    },
    opts.destination,
  );
}
