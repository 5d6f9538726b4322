// The logs of runs as they happen: one writer per step attempt (run-log-store.ts keeps the bytes),
// the live feed the `logs` event carries (bounded: the latest lines, and a marker for what a flood
// skipped), and pages read back for `readStepLog` / `readRunLog`.

import type { LogLine, LogPage } from '../core/api';
import { ValidationError, quote } from '../core/errors';
import type { RunLogStore } from '../store/run-log-store';
import { LiveFeed } from '../store/live-feed';
import type { StepLogWriter } from '../store/step-log';
import type { LogStream } from '../store/step-log-format';

/** The most bytes one `logs` event carries (its lines, and what the event adds around each). */
const liveEventBytes = 256 * 1024;
const defaultPageLines = 1000;
const maxPageLines = 10_000;
/** The most bytes of lines one page answer carries. */
const maxPageBytes = 2 * 1024 * 1024;

interface Attempt {
  runId: string;
  stepId: string;
  attempt: number;
  writer: StepLogWriter | undefined;
  /** The end of the last writer: a new one writes only after it (two writers never share the files). */
  ending: Promise<void> | undefined;
  live: LiveFeed;
}

export class RunLogs {
  private readonly attempts = new Map<string, Attempt>();

  /** `ready` is called when the live feed has something: the event pacer then calls `take`. */
  constructor(private readonly store: RunLogStore, private readonly ready: () => void) {}

  private attempt(runId: string, stepId: string, attempt: number, fresh = false): Attempt {
    const key = `${runId}/${stepId}/${attempt}`;
    let entry = this.attempts.get(key);
    if (!entry) this.attempts.set(key, (entry = { runId, stepId, attempt, writer: undefined, ending: undefined, live: new LiveFeed(liveEventBytes) }));
    entry.writer ??= this.store.logWriter(runId, stepId, attempt, entry.live, entry.ending, fresh);
    return entry;
  }

  /** A step attempt begins: its log is new, so its live lines carry their numbers. */
  begin(runId: string, stepId: string, attempt: number): void {
    this.attempt(runId, stepId, attempt, true);
  }

  /** One line of Factory's own (or an agent's parsed output); stepId '' is the setup log. */
  line(runId: string, stepId: string, attempt: number, text: string, stream: LogStream): void {
    this.attempt(runId, stepId, attempt).writer!.line(text, stream);
    this.ready();
  }

  /** A process's bytes as they come; a promise when the producer should wait for the disk. */
  output(runId: string, stepId: string, attempt: number, chunk: Buffer, stream: 'out' | 'err'): Promise<void> | undefined {
    const wait = this.attempt(runId, stepId, attempt).writer!.output(chunk, stream);
    this.ready();
    return wait;
  }

  /** Writes what is left of an attempt's log and closes it (a later line opens it again). */
  async end(runId: string, stepId: string, attempt: number): Promise<void> {
    const entry = this.attempts.get(`${runId}/${stepId}/${attempt}`);
    const writer = entry?.writer;
    if (!entry || !writer) return;
    entry.writer = undefined;
    entry.ending = writer.end().catch((error) => console.error(`Writing the log of ${runId} ${stepId || 'setup'} failed: ${error}`));
    const ending = entry.ending;
    await ending;
    if (entry.ending !== ending) return;
    entry.ending = undefined;
    if (!entry.writer && !entry.live.pending) this.attempts.delete(`${runId}/${stepId}/${attempt}`);
  }

  /** A line in a finished part of a run's log (a note written later; default: the setup log): opened, written, closed. */
  note(runId: string, text: string, stepId = '', attempt = 0): void {
    this.line(runId, stepId, attempt, text, 'info');
    void this.end(runId, stepId, attempt);
  }

  /** Ends every open log (Factory stops). */
  async stop(): Promise<void> {
    await Promise.all([...this.attempts.values()].map((entry) => this.end(entry.runId, entry.stepId, entry.attempt)));
  }

  /**
   * The live lines since the last call, at most `liveEventBytes` in all: per attempt the latest
   * lines, after one marker line `… N lines skipped (full log on disk)` when a flood outran them.
   */
  take(): LogLine[] {
    const lines: LogLine[] = [];
    let budget = liveEventBytes;
    for (const [key, entry] of this.attempts) {
      if (!entry.live.pending) continue;
      const { runId, stepId, attempt } = entry;
      // What a line costs in the event besides its text (its JSON object with run, step, time and stream).
      const overhead = JSON.stringify({ runId, stepId, attempt, line: '', ts: Date.now(), stream: 'info', n: 1e12 }).length + 1;
      const { skipped, lines: taken } = entry.live.take(budget, overhead);
      for (const line of taken) budget -= Buffer.byteLength(line.line) + overhead;
      if (skipped > 0) lines.push({ runId, stepId, attempt, line: `… ${skipped.toLocaleString('en')} lines skipped (full log on disk)`, stream: 'info', skipped });
      for (const line of taken) lines.push({ runId, stepId, attempt, ...line });
      if (!entry.writer && !entry.ending) this.attempts.delete(key);
    }
    return lines;
  }

  /** A page of an attempt's log (see LogPage), with its marker line first when lines were left out. */
  async read(runId: string, stepId: string, attempt: number, page: unknown): Promise<LogLine[]> {
    const request = readPage(page);
    await this.attempts.get(`${runId}/${stepId}/${attempt}`)?.writer?.flush();
    const { lines, earlier } = await this.store.readLog(runId, stepId, attempt, request);
    if (earlier === 0) return lines;
    const first = lines[0]?.n ?? request.before ?? 1;
    const what = request.search === undefined ? 'earlier lines' : `earlier lines holding ${quote(request.search)}`;
    return [{ runId, stepId, attempt, line: `… ${earlier.toLocaleString('en')} ${what} (read them with page.before = ${first}, or download the log)`, stream: 'info', skipped: earlier }, ...lines];
  }
}

/** Checks a page from any door; the defaults filled in. */
function readPage(input: unknown): { before?: number; limit: number; maxBytes: number; search?: string } {
  if (input === undefined || input === null) return { limit: defaultPageLines, maxBytes: maxPageBytes };
  const page = input as LogPage;
  if (typeof input !== 'object' || Array.isArray(input)) throw new ValidationError(`A log page is { before?, limit?, search? }, not ${quote(input)}`);
  if (page.before !== undefined && !(Number.isSafeInteger(page.before) && page.before >= 1)) throw new ValidationError(`page.before must be a line number from 1, not ${quote(page.before)}`);
  if (page.limit !== undefined && !(Number.isInteger(page.limit) && page.limit >= 1 && page.limit <= maxPageLines)) throw new ValidationError(`page.limit must be a whole number from 1 to ${maxPageLines}, not ${quote(page.limit)}`);
  if (page.search !== undefined && !(typeof page.search === 'string' && page.search.length > 0 && page.search.length <= 200 && !page.search.includes('\n'))) throw new ValidationError('page.search must be text of 1 to 200 characters on one line');
  return { ...(page.before !== undefined ? { before: page.before } : {}), limit: page.limit ?? defaultPageLines, maxBytes: maxPageBytes, ...(page.search !== undefined ? { search: page.search } : {}) };
}
