// A problem found in a definition file, located precisely enough for a person to fix it.

export interface Problem {
  /** Path of the file as given to the loader (relative when the store root was relative). */
  file: string;
  line?: number;
  column?: number;
  /** Field path inside the file, e.g. `brain.model`. */
  field?: string;
  message: string;
  severity: 'error' | 'warning';
}

/** `file:line:column: field: message`, the shape editors and terminals turn into links. */
export function formatProblem(p: Problem): string {
  const where = [p.file, p.line, p.line !== undefined ? p.column : undefined].filter((x) => x !== undefined).join(':');
  const tag = p.severity === 'warning' ? 'warning: ' : '';
  return `${where}: ${tag}${p.field ? `${p.field}: ` : ''}${p.message}`;
}

/** Thrown where a single definition must be valid to go on (e.g. `warren run <agent>`). */
export class DefinitionError extends Error {
  override readonly name = 'DefinitionError';
  readonly problems: readonly Problem[];
  constructor(problems: readonly Problem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.problems = problems;
  }
}
