// A refused call as the renderer sees it: an Error whose message is the words to show, carrying the
// field path of each problem that names a field, so a form puts the problem at its field without
// reading paths out of the words. The web bridge makes one from a 400 body `{ error, fields }`; the
// desktop's window.factory answers every call with a MethodAnswer (the context bridge would keep
// only a rejected Error's message), which desktopApi turns back into a value or a CallError.
// No DOM here: the desktop tests drive it in Node.

import type { DesktopBridge, FactoryApi, FieldMessage } from '../src/core/api';

/** A call the service refused: `message` in words; `fields` the path of each problem naming a field. */
export class CallError extends Error {
  override name = 'CallError';
  readonly fields: FieldMessage[];
  constructor(message: string, fields: FieldMessage[] = []) {
    super(message);
    this.fields = fields;
  }
}

/** The field problems a failed call carried; none for any other error. */
export function fieldsOf(error: unknown): FieldMessage[] {
  return error instanceof CallError ? error.fields : [];
}

/** The `fields` of an answer off the wire: only entries with a field path and a message in text. */
export function readFields(value: unknown): FieldMessage[] {
  if (!Array.isArray(value)) return [];
  const fields: FieldMessage[] = [];
  for (const entry of value) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { field, message } = entry as Record<string, unknown>;
    if (typeof field === 'string' && field !== '' && typeof message === 'string') fields.push({ field, message });
  }
  return fields;
}

/**
 * FactoryApi over the desktop's window.factory: each method resolves with the answer's value, or
 * rejects with a CallError holding the answer's words and fields. `platform` and `on` pass through.
 */
export function desktopApi(bridge: DesktopBridge): FactoryApi {
  const api: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(bridge)) {
    if (name === 'platform' || name === 'on' || typeof member !== 'function') {
      api[name] = member;
      continue;
    }
    api[name] = async (...args: unknown[]) => {
      const answer = (await (member as (...values: unknown[]) => Promise<unknown>)(...args)) as Record<string, unknown> | null;
      if (answer?.ok === true) return answer.value;
      throw new CallError(typeof answer?.error === 'string' ? answer.error : `${name} failed: the desktop app's answer could not be read`, readFields(answer?.fields));
    };
  }
  return api as unknown as FactoryApi;
}
