// The one entry every JSON-lines parser shares: decode a line, hand the object to the format's reader,
// and fall back to a plain line when the line is not JSON, not an object, or not a shape the format knows.
import { asObject, type JsonObject } from './fields';
import { plainLine } from './readable';
import type { ParsedLine } from './types';

/** A format's reading of one decoded object: its log lines, or undefined when it does not know the object. */
type EventReader = (event: JsonObject) => ParsedLine[] | undefined;

/** The log lines `line` stands for. Never throws; a blank line stands for nothing. */
export function readJsonLine(line: string, read: EventReader): ParsedLine[] {
  const start = line.search(/\S/);
  if (start === -1) return [];
  // Only an object can be an event: skip JSON.parse for anything else.
  if (line.charCodeAt(start) !== 0x7b /* { */) return [plainLine(line)];
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return [plainLine(line)];
  }
  const event = asObject(value);
  if (!event) return [plainLine(line)];
  try {
    return read(event) ?? [plainLine(line)];
  } catch {
    return [plainLine(line)];
  }
}
