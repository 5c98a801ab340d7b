// Standard five-field cron (minute hour day-of-month month day-of-week), read by cron-parser in an IANA time zone.
// cron-parser also takes a seconds field, `@` macros and `H` (a random value per process): none of them is standard
// cron, and `H` would let two daemons disagree on a schedule's ticks, so they are refused here.
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { memoized } from './memo.ts';

const FIELDS = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;
const NAMES = /mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec/gi;

/**
 * Why `expr` is not a five-field cron expression that ever fires; undefined when it is one. Remembered per
 * expression: every agent's default summary schedule is the same one, and its check costs ~40 µs.
 */
export const cronProblem: (expr: string) => string | undefined = memoized(uncachedCronProblem);

function uncachedCronProblem(expr: string): string | undefined {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== FIELDS.length) return `expected five fields (${FIELDS.join(', ')}), like "0 9 * * 1-5"; got ${fields.length}`;
  // Day and month names aside (`thu`), an H is cron-parser's random value.
  const hashed = fields.findIndex((f) => /h/i.test(f.replace(NAMES, '')));
  if (hashed >= 0) return `the ${FIELDS[hashed]} field "${fields[hashed]}": H (a random value) is not standard cron`;
  try {
    // One tick from a fixed date: an expression that can never match (31 February) throws here, not at load.
    cronFrom(fields.join(' '), 'UTC', Date.UTC(2026, 0, 1)).next();
    return undefined;
  } catch (err) {
    return `not a valid cron expression: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** The expression's ticks after `from` (epoch ms), in `timezone`: `next()` is the first tick strictly after it. */
export function cronFrom(expr: string, timezone: string, from: number): CronExpression {
  return CronExpressionParser.parse(expr, { currentDate: new Date(from), tz: timezone });
}
