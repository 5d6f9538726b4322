// Named errors. Bad input throws one of these where it enters, with a message a user can act on;
// every door maps them through one function to a status and `{ "error": message }`.

/** Base of every error Factory throws on purpose: its message is safe to show to the user. */
export class FactoryError extends Error {
  override name = 'FactoryError';
}

/** One problem found while validating input: `field` is a dotted path such as `steps.build.command`. */
export interface ValidationIssue {
  field: string;
  message: string;
}

export interface ValidationErrorOptions {
  /**
   * The issues' messages already name their field in words ("Step 2: the id …"): the message
   * leaves the field paths out, and only `issues` keeps them. Otherwise each line is
   * `field: message`, which the forms read to put a problem at its field.
   */
  fieldsInWords?: boolean;
}

/** Input that does not fit: the message lists every issue, one per line. */
export class ValidationError extends FactoryError {
  override name = 'ValidationError';
  readonly issues: ValidationIssue[];
  /** The problems without the prefix (what a test of unsaved input reports). */
  readonly details: string;
  constructor(issues: ValidationIssue[] | string, prefix?: string, options: ValidationErrorOptions = {}) {
    const list = typeof issues === 'string' ? [{ field: '', message: issues }] : issues;
    const lines = list.map((issue) => (issue.field && !options.fieldsInWords ? `${issue.field}: ${issue.message}` : issue.message));
    super(prefix ? [prefix, ...lines].join('\n') : lines.join('\n'));
    this.issues = list;
    this.details = lines.join('\n');
  }
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
