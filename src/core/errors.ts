// Named errors. Bad input throws one of these where it enters, with a message a user can act on;
// every door maps them through one function to a status and `{ "error": message }` (plus the
// field paths of a ValidationError's problems, for the forms).

/** Base of every error Factory throws on purpose: its message is safe to show to the user. */
export class FactoryError extends Error {
  override name = 'FactoryError';
}

/**
 * One problem found while validating input: `field` is a dotted path such as `steps.build.command`
 * ('' when it names no field), and `message` names that field in words ("The poll interval must be
 * …"), because people and remote clients read the message without the path.
 */
export interface ValidationIssue {
  field: string;
  message: string;
}

/**
 * Input that does not fit: the message is the prefix, if any, and every issue's message, one per
 * line, in words alone. The field paths stay in `issues`, which every door carries beside the
 * message (HTTP `fields`, the desktop's answer envelope) so a form puts each problem at its field.
 */
export class ValidationError extends FactoryError {
  override name = 'ValidationError';
  readonly issues: ValidationIssue[];
  /** The problems without the prefix (what a test of unsaved input reports). */
  readonly details: string;
  constructor(issues: ValidationIssue[] | string, prefix?: string) {
    const list = typeof issues === 'string' ? [{ field: '', message: issues }] : issues;
    const lines = list.map((issue) => issue.message);
    super(prefix ? [prefix, ...lines].join('\n') : lines.join('\n'));
    this.issues = list;
    this.details = lines.join('\n');
  }
}

/**
 * The problems of `error` that name a field, for a door to carry beside the message: a
 * ValidationError's issues with a field path; none for any other error.
 */
export function fieldProblems(error: unknown): ValidationIssue[] {
  if (!(error instanceof ValidationError)) return [];
  return error.issues.filter((issue) => issue.field !== '').map(({ field, message }) => ({ field, message }));
}

/** `answer` with `fields` beside it when `error` has field problems (fieldProblems); else `answer`. */
export function withFields<Answer extends object>(answer: Answer, error: unknown): Answer & { fields?: ValidationIssue[] } {
  const fields = fieldProblems(error);
  return fields.length > 0 ? { ...answer, fields } : answer;
}

/**
 * A test method's answer for input or a service that refused: `{ ok: false, error, fields? }`, the
 * problems in words without the ValidationError's heading ("Trigger not saved:"), and their paths.
 */
export function testFailure(error: unknown): { ok: false; error: string; fields?: ValidationIssue[] } {
  return withFields({ ok: false as const, error: error instanceof ValidationError ? error.details : errorMessage(error) }, error);
}

/** An id that names nothing. */
export class NotFoundError extends FactoryError {
  override name = 'NotFoundError';
}

/** The request is valid but the resource is in the wrong state for it (a running run, a used pipeline). */
export class ConflictError extends FactoryError {
  override name = 'ConflictError';
}

/** A desktop-only method called where there is no desktop. */
export class UnavailableError extends FactoryError {
  override name = 'UnavailableError';
}

/** Quotes a value for an error message: strings in backticks, cut to a readable length; '' in words. */
export function quote(value: unknown): string {
  let text: string;
  if (value === '') return 'an empty text';
  if (typeof value === 'string') text = value;
  else if (value === undefined) return 'undefined';
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  if (text.length > 80) text = text.slice(0, 77) + '...';
  return '`' + text + '`';
}

/** The message of anything thrown, for an error answer (never a stack trace). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : 'Unknown error';
}
