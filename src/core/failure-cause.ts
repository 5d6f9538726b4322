// The line of a failed step's log most likely to say why it failed: what the run page links to
// and highlights, and what any other surface (a phone, a tracker comment) can quote. Pure: the
// engine hands it the lines it read back (engine/step-driver.ts), numbered as the log numbers them.

import type { FailureCause, LogLine } from './api';

/** The longest text a cause keeps, in characters (the log keeps the whole line). */
export const maxCauseLength = 300;

/**
 * Words people and tools write when something went wrong and say what: a line holding one of
 * these names the cause better than a line that only says "error" (npm prints `npm error code
 * ENOENT` four lines before `npm error enoent Could not read package.json`).
 */
const telling = /\b(could not|couldn't|cannot|can't|unable to|not found|no such file|permission denied|access denied|denied|fatal|traceback|exception|panic|segmentation fault|undefined reference|syntax ?error|type ?error|reference ?error|assertion ?error|assertion failed|not defined|unexpected token)\b/i;
/** Words that only say that something went wrong. */
const generic = /\b(error|errors|failed|failure|ENOENT|EACCES|EPERM|ECONNREFUSED|EADDRINUSE|exit(ed)? (with )?(status|code) [1-9]\d*)\b/i;
/** Lines that use those words without an error: log levels below error, and counts of none. */
const notAnError = /^\s*(\[?(warn|warning|info|debug|trace|note|hint|notice)\]?)\b|\b(0|no|zero)\s+(errors?|failures?|failed|problems?)\b|\berrors?:\s*0\b|\bfailed:\s*0\b/i;
/** An agent's reported error as its harness logs it (harness/parsers/readable.ts `errorLine`). */
const reportedError = /^error: (.+)$/;

/** A line as a person reads it: colour codes out, trimmed, cut to `maxCauseLength`. */
function readable(line: string): string {
  const text = line.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').trim();
  return text.length > maxCauseLength ? `${text.slice(0, maxCauseLength - 1)}…` : text;
}

/**
 * The cause of a failure among `lines` (one attempt's log, in order; lines without a number, such
 * as a page's marker, are passed over), or undefined when no line reads like an error. Factory's
 * own lines (`info`: the echoed command, "Exited with code 1 …") are never the cause. In order:
 * 1. the agent's own error: the last `error: X` line on stderr whose X the step's `stepError` quotes;
 * 2. the first line with a telling word (could not, not found, denied, traceback, …);
 * 3. the first line with a generic one (error, failed, ENOENT, …).
 * Warnings, notes and "0 errors" are not errors.
 */
export function findFailureCause(lines: readonly Pick<LogLine, 'line' | 'n' | 'stream'>[], stepError?: string): FailureCause | undefined {
  const candidates = lines.filter((line) => line.n !== undefined && line.stream !== 'info');

  // 1. The agent's own error, as the step's error quotes it.
  if (stepError) {
    const reported = candidates.findLast((line) => {
      const message = line.stream === 'err' ? reportedError.exec(line.line.trim())?.[1] : undefined;
      return message !== undefined && message.trim() !== '' && stepError.includes(message.trim());
    });
    if (reported) return { line: reported.n!, text: readable(reported.line) };
  }
  // 2 and 3. The first line that reads like an error, telling words first.
  const errorLike = candidates.map((line) => ({ line: line.n!, text: readable(line.line) })).filter((line) => !notAnError.test(line.text));
  return errorLike.find((line) => telling.test(line.text)) ?? errorLike.find((line) => generic.test(line.text));
}
