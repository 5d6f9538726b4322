// Safe readers for decoded JSON: each returns undefined (or an empty list) for a value of the wrong type,
// so a parser never trusts a CLI's shapes.

export type JsonObject = Record<string, unknown>;

/** `value` when it is a plain object (not null, not an array). */
export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** `value` when it is a finite number. */
export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `value` when it is an array, otherwise an empty one. */
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The sum of the numbers among `values`, or undefined when none is a number. */
export function sumNumbers(...values: unknown[]): number | undefined {
  let total: number | undefined;
  for (const value of values) {
    const number = asNumber(value);
    if (number !== undefined) total = (total ?? 0) + number;
  }
  return total;
}

/** The latest session id a CLI reported: each `see` of a non-blank text replaces it. */
export class LatestSessionId {
  value: string | undefined;

  see(value: unknown): void {
    if (typeof value === 'string' && value.trim() !== '') this.value = value;
  }
}
