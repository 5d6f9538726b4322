// Reading untrusted values from any door (IPC, the remote API, files on disk): readers that check
// one value each and add a problem in words to a list, so that every problem of an input is
// reported together before it is refused. Settings, projects, pipelines, runs, triggers, channels
// and harnesses all read through these.

import { quote, type ValidationIssue } from './errors';

export type Issues = ValidationIssue[];

/** A JSON object: not null, not a list. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The record's own value for `key`: never something inherited through a prototype. */
export function own(record: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

/** A value as an error message shows it: lists and objects by their kind (they may be huge or deep), the rest quoted. */
export function shown(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object' && value !== null) return 'an object';
  return quote(value);
}

/** Missing: undefined or null. */
export function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

/**
 * Why text holding NUL (U+0000) is refused where it enters (names, commands, prompts, messages,
 * variables, project paths, issue fields): `execve` takes C strings, so no command, argument or
 * environment variable can carry it, and a run would only fail when its step starts.
 */
export const nulCharacterMessage = 'holds a NUL character (U+0000), which no command, argument or environment variable can carry: remove it';

/** `subject` ("The poll interval") before `message`; without one the message starts at its verb. */
function said(subject: string | undefined, message: string): string {
  return subject ? `${subject} ${message}` : message;
}

interface TextRule {
  max: number;
  /** Cut the spaces around the text (names, ids), or keep it as written (commands, prompts). */
  trim: boolean;
  /** The message when the text is missing or blank; without it, blank text counts as absent. */
  required?: string;
  /** What the message names, such as "The name"; see `said`. */
  subject?: string;
}

/** Text of at most `rule.max` characters, without NUL; absent (or blank, unless required) is undefined. */
export function readText(record: Record<string, unknown>, key: string, field: string, rule: TextRule, issues: Issues): string | undefined {
  const value = own(record, key);
  if (isAbsent(value)) {
    if (rule.required) issues.push({ field, message: rule.required });
    return undefined;
  }
  if (typeof value !== 'string') {
    issues.push({ field, message: said(rule.subject, `must be text, not ${shown(value)}`) });
    return undefined;
  }
  if (value.trim() === '') {
    if (rule.required) issues.push({ field, message: rule.required });
    return undefined;
  }
  const text = rule.trim ? value.trim() : value;
  if (text.length > rule.max) {
    issues.push({ field, message: said(rule.subject, `is ${text.length} characters long; the most is ${rule.max}`) });
    return undefined;
  }
  if (text.includes('\0')) {
    issues.push({ field, message: said(rule.subject, nulCharacterMessage) });
    return undefined;
  }
  return text;
}

interface IntegerRule {
  min: number;
  max: number;
  /** What is counted, such as "seconds". */
  unit?: string;
  /** What the message names; see `said`. */
  subject?: string;
  /** Said after the range, such as "(0 keeps them until deleted)". */
  note?: string;
}

/** A whole number from `rule.min` to `rule.max`; absent is undefined. */
export function readInteger(record: Record<string, unknown>, key: string, field: string, rule: IntegerRule, issues: Issues): number | undefined {
  const value = own(record, key);
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min || value > rule.max) {
    const counted = rule.unit ? ` of ${rule.unit}` : '';
    const note = rule.note ? ` ${rule.note}` : '';
    issues.push({ field, message: said(rule.subject, `must be a whole number${counted} from ${rule.min} to ${rule.max}${note}, not ${shown(value)}`) });
    return undefined;
  }
  return value;
}

/** true or false; absent is undefined. */
export function readBoolean(record: Record<string, unknown>, key: string, field: string, issues: Issues, subject?: string): boolean | undefined {
  const value = own(record, key);
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'boolean') {
    issues.push({ field, message: said(subject, `must be true or false, not ${shown(value)}`) });
    return undefined;
  }
  return value;
}
