// pino everywhere: JSON lines for machines, pretty only when a person watches a terminal.
import { pino, type Logger } from 'pino';

export function createLogger(opts: { level?: string; pretty?: boolean } = {}): Logger {
  const level = opts.level ?? process.env.WARREN_LOG_LEVEL ?? 'info';
  const pretty = opts.pretty ?? process.stdout.isTTY;
  return pino({
    level,
    base: undefined,
    // Belt and braces: fields that could carry credentials never reach a log line.
    redact: { paths: ['apiKey', 'api_key', 'adminKey', '*.apiKey', '*.api_key', 'headers.authorization', '*.headers.authorization'], censor: '[redacted]' },
    transport: pretty ? { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } : undefined,
  });
}
