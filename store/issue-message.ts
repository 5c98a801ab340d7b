// Turns a zod issue into a sentence a person can act on: what was expected, and what the file has instead.
// Messages written into the schema (regex hints) are kept as they are.
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

const TYPE_NAMES: Record<string, string> = {
  int: 'a whole number',
  number: 'a number',
  string: 'text',
  boolean: 'true or false',
  object: 'a mapping (key: value)',
  array: 'a list',
};

export function describeValue(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return 'nothing';
}

function expectedOf(expected: string): string {
  return TYPE_NAMES[expected] ?? expected;
}

function bound(issue: Extract<Issue, { code: 'too_big' | 'too_small' }>): string {
  const n = Number(issue.code === 'too_big' ? issue.maximum : issue.minimum);
  const word = issue.code === 'too_big' ? (issue.inclusive === false ? 'below' : 'at most') : issue.inclusive === false ? 'above' : 'at least';
  if (issue.origin === 'string') return `must have ${word} ${n} character${n === 1 ? '' : 's'}`;
  if (issue.origin === 'array') return `must have ${word} ${n} item${n === 1 ? '' : 's'}`;
  return `must be ${word} ${n}`;
}

/** `present` says whether the field exists in the file; a missing one reads "required field is missing". */
export function describeIssue(issue: Issue, value: unknown, present: boolean): string {
  const custom = !/^(Invalid|Too (big|small))/.test(issue.message);
  switch (issue.code) {
    case 'invalid_type':
      if (!present) return `required field is missing (expected ${expectedOf(issue.expected)})`;
      return `expected ${expectedOf(issue.expected)}, got ${describeValue(value)}`;
    case 'invalid_value': {
      const options = issue.values.map((v) => String(v)).join(', ');
      if (!present) return `required field is missing (expected one of: ${options})`;
      return `expected one of: ${options}; got ${describeValue(value)}`;
    }
    case 'too_big':
    case 'too_small':
      return `${bound(issue)} (got ${Array.isArray(value) ? `${value.length} items` : describeValue(value)})`;
    case 'invalid_format':
      if (custom) return issue.message;
      return `expected ${issue.format === 'url' ? 'a URL like https://host/path' : `a ${issue.format}`}, got ${describeValue(value)}`;
    default:
      return issue.message;
  }
}
