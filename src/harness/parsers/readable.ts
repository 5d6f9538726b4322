// Builds the readable log lines every parser shares: text split into lines, `→ Tool: summary` for a
// tool call, `← ok` / `← error: …` for its result, and a one-line session note.
import { asArray, asObject, asString } from './fields';
import type { ParsedLine } from './types';

/** The longest summary of a tool's input or result, in characters. */
const summaryLimit = 200;

/** Input fields that say best what a tool call does, in order of preference. */
const summaryKeys = [
  'command', 'cmd', 'pattern', 'query', 'url', 'file_path', 'filePath', 'absolute_path', 'path', 'description', 'prompt',
] as const;

/** `line` unchanged as an 'out' line: how a line no parser understands is shown. */
export function plainLine(line: string): ParsedLine {
  return { text: line, stream: 'out' };
}

/** Each line of `text` on `stream`; blank lines at the start and end are dropped, blank lines inside kept. */
export function textLines(text: string, stream: ParsedLine['stream'] = 'out'): ParsedLine[] {
  const lines = text.split(/\r?\n/);
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]!.trim() === '') start++;
  while (end > start && lines[end - 1]!.trim() === '') end--;
  return lines.slice(start, end).map((line) => ({ text: line, stream }));
}

/** The first non-blank line of `text`, trimmed and cut to `limit` characters (an ellipsis marks the cut). */
export function firstLine(text: string, limit = summaryLimit): string {
  const line = text.trimStart().split(/\r?\n/, 1)[0]!.trim();
  return line.length > limit ? line.slice(0, limit - 1) + '…' : line;
}

/** Readable text of a tool's result or error: a string, a list of text blocks, or an object's `message`/`text`. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(describeValue).filter((text) => text !== '').join('\n');
  const object = asObject(value);
  if (object) {
    const text = asString(object.message) ?? asString(object.text) ?? asString(object.errorMessage);
    if (text !== undefined) return text;
  }
  return compactJson(value);
}

/** A one-line summary of a tool's input: its most telling field, or the input as compact JSON. */
function summarizeInput(input: unknown): string {
  const object = asObject(input);
  if (object) {
    for (const key of summaryKeys) {
      const value = asString(object[key]);
      if (value !== undefined && value.trim() !== '') return firstLine(value);
    }
    if (Object.keys(object).length === 0) return '';
  }
  if (input === undefined || input === null) return '';
  return firstLine(typeof input === 'string' ? input : compactJson(input));
}

/** `→ name: summary of input` (or `→ name` when the input says nothing). */
export function toolCallLine(name: string, input: unknown): ParsedLine {
  const summary = summarizeInput(input);
  return { text: summary === '' ? `→ ${name}` : `→ ${name}: ${summary}`, stream: 'out' };
}

/** `← ok`, or `← error: first line of detail` when the tool failed. */
export function toolResultLine(failed: boolean, detail?: unknown): ParsedLine {
  if (!failed) return { text: '← ok', stream: 'out' };
  const text = firstLine(describeValue(detail));
  return { text: text === '' ? '← error' : `← error: ${text}`, stream: 'out' };
}

/** `session … · model …` from whatever of the two is known, as an 'info' line (none when neither is). */
export function sessionLines(sessionId: unknown, model: unknown): ParsedLine[] {
  const parts: string[] = [];
  const session = asString(sessionId);
  const modelName = asString(model);
  if (session) parts.push(`session ${session}`);
  if (modelName) parts.push(`model ${modelName}`);
  return parts.length > 0 ? [{ text: parts.join(' · '), stream: 'info' }] : [];
}

/** `done · 3 turns · 1.2 s · $0.0123` from the figures a final result reports. */
export function doneLine(figures: { turns?: number; toolCalls?: number; durationMs?: number; costUsd?: number }): ParsedLine {
  const parts = ['done'];
  if (figures.turns !== undefined) parts.push(`${figures.turns} ${figures.turns === 1 ? 'turn' : 'turns'}`);
  if (figures.toolCalls !== undefined) parts.push(`${figures.toolCalls} tool ${figures.toolCalls === 1 ? 'call' : 'calls'}`);
  if (figures.durationMs !== undefined) parts.push(`${(figures.durationMs / 1000).toFixed(1)} s`);
  if (figures.costUsd !== undefined) parts.push(`$${figures.costUsd.toFixed(4)}`);
  return { text: parts.join(' · '), stream: 'info' };
}

/**
 * An 'err' line `error: message` (first line, cut). `reported` (the default) marks it as an error
 * the CLI reported, which a timeout names; a warning shown the same way passes false.
 */
export function errorLine(message: string, reported = true): ParsedLine {
  const text = firstLine(message);
  return reported ? { text: `error: ${text}`, stream: 'err', error: text } : { text: `error: ${text}`, stream: 'err' };
}

/** The texts of the `{ type: 'text', text }` blocks among `blocks`, in order. */
export function textBlocks(blocks: unknown): string[] {
  const texts: string[] = [];
  for (const block of asArray(blocks)) {
    const object = asObject(block);
    const text = object?.type === 'text' ? asString(object.text) : undefined;
    if (text !== undefined) texts.push(text);
  }
  return texts;
}

function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
