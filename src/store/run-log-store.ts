// The logs of runs in the data folder (DESIGN §5): where each attempt's log lives, and who may
// write and read it. One job: every run id, step id and attempt is checked before it becomes
// part of a path, and a deleted run's logs are neither written nor read.
//   runs/<run-id>/logs/<step>.<attempt>.log|idx the log's bytes and their index (step-log.ts); setup: _setup.0
//                                               (logs of earlier versions, <step>.<attempt>.jsonl, are still read)
// The bytes themselves are written by step-log.ts and read by step-log-reader.ts.

import { join } from 'node:path';
import type { LogLine } from '../core/api';
import { ValidationError, quote } from '../core/errors';
import { isId } from '../core/ids';
import { isRecord } from '../core/validate';
import { readJsonLinesReport } from './jsonl';
import type { LiveFeed } from './live-feed';
import { StepLogWriter } from './step-log';
import type { StoredLine } from './step-log-format';
import { rawLogPath, readPage, type PageRequest } from './step-log-reader';
import { PendingWork } from './work';

const stepIdPattern = /^[a-z][a-z0-9_-]{0,39}$/;
const setupLogName = '_setup';
const logStreams: ReadonlySet<unknown> = new Set(['out', 'err', 'info']);

/**
 * Writes and reads the logs of runs under `runsDir`. Log appends are batched per file and tracked
 * per run, so that deleting a run can wait for them (`settled`). Lines of a run in `deleted` go
 * nowhere, and its logs read as empty.
 */
export class RunLogStore {
  readonly #runsDir: string;
  /** Run ids deleted (or being deleted): the run store's set, read only here. */
  readonly #deleted: ReadonlySet<string>;
  readonly #appends = new PendingWork();

  constructor(runsDir: string, deleted: ReadonlySet<string>) {
    this.#runsDir = runsDir;
    this.#deleted = deleted;
  }

  /**
   * A writer for one attempt's log (stepId '' is the setup log), tracked so that deleting the run
   * waits for it. `live` receives its complete lines as they come. A malformed runId, stepId or
   * attempt throws ValidationError. Lines of a deleted run go nowhere.
   */
  logWriter(runId: string, stepId: string, attempt: number, live?: LiveFeed, after?: Promise<unknown>, fresh = false): StepLogWriter {
    const path = this.#logPath(runId, logFileName(runId, stepId, attempt, 'append'));
    const writer = new StepLogWriter(path, Date.now, live, () => this.#deleted.has(runId), after, fresh ? 0 : undefined);
    const end = writer.end.bind(writer);
    writer.end = () => this.#appends.track(runId, end());
    return writer;
  }

  /**
   * A page of one attempt's log (see step-log-reader.ts `readPage`), with runId, stepId and attempt
   * filled in; logs written before this call are included. Logs of earlier versions (JSON Lines) are
   * read whole and paged here. No log: no lines. A malformed runId, stepId or attempt rejects.
   */
  async readLog(runId: string, stepId: string, attempt: number, page: PageRequest): Promise<{ lines: LogLine[]; earlier: number; total: number }> {
    const name = logFileName(runId, stepId, attempt, 'read');
    if (this.#deleted.has(runId)) return { lines: [], earlier: 0, total: 0 };
    await this.#appends.settled(runId);
    const stored = await readPage(this.#logPath(runId, name), page) ?? (await this.#readOldLog(runId, name, page));
    return { ...stored, lines: stored.lines.map((line) => ({ runId, stepId, attempt, ...line })) };
  }

  /** The file of one attempt's log for a download, or the lines of a log of an earlier version; undefined when there is none. */
  async logDownload(runId: string, stepId: string, attempt: number): Promise<{ path: string } | { lines: string[] } | undefined> {
    const name = logFileName(runId, stepId, attempt, 'read');
    if (this.#deleted.has(runId)) return undefined;
    await this.#appends.settled(runId);
    const path = await rawLogPath(this.#logPath(runId, name));
    if (path) return { path };
    const { records } = await readJsonLinesReport<unknown>(`${this.#logPath(runId, name)}.jsonl`).catch(() => ({ records: [] as unknown[] }));
    return records.length ? { lines: records.flatMap((record) => (isRecord(record) && typeof record.line === 'string' ? [record.line] : [])) } : undefined;
  }

  /** Resolves once the appends of run `runId` under way have settled (never rejects). */
  settled(runId: string): Promise<void> {
    return this.#appends.settled(runId);
  }

  /** Resolves once every append made so far has settled (never rejects). */
  settledAll(): Promise<void> {
    return this.#appends.settledAll();
  }

  /** A log of an earlier version (one JSON record per line), paged in memory. */
  async #readOldLog(runId: string, name: string, page: PageRequest): Promise<{ lines: StoredLine[]; earlier: number; total: number }> {
    const { records } = await readJsonLinesReport<unknown>(`${this.#logPath(runId, name)}.jsonl`);
    const all: StoredLine[] = [];
    for (const record of records) {
      if (!isRecord(record) || typeof record.line !== 'string') continue;
      all.push({ n: all.length + 1, line: record.line, ts: typeof record.ts === 'number' ? record.ts : 0, stream: logStreams.has(record.stream) ? (record.stream as StoredLine['stream']) : 'out' });
    }
    const before = Math.min(page.before ?? all.length + 1, all.length + 1);
    const candidates = all.slice(0, before - 1).filter((line) => page.search === undefined || line.line.toLowerCase().includes(page.search.toLowerCase()));
    const lines = candidates.slice(-page.limit);
    return { lines, earlier: candidates.length - lines.length, total: all.length };
  }

  #logPath(runId: string, name: string): string {
    return join(this.#runsDir, runId, 'logs', name);
  }
}

/**
 * The file name of one attempt's log, after checking each part that goes into the path: the run
 * id, the step id (or '' for setup) and the attempt (a whole number from 0). Throws ValidationError.
 */
function logFileName(runId: unknown, stepId: unknown, attempt: unknown, action: 'append' | 'read'): string {
  const what = action === 'append' ? 'Cannot append to' : 'Cannot read';
  if (!isId(runId, 'run')) throw new ValidationError(`${what} the log of the run ${quote(runId)}: it is not a run id.`);
  if (stepId !== '' && (typeof stepId !== 'string' || !stepIdPattern.test(stepId))) {
    throw new ValidationError(`${what} the log of the step ${quote(stepId)}: it is not a step id.`);
  }
  if (!Number.isSafeInteger(attempt) || (attempt as number) < 0) {
    throw new ValidationError(`${what} the log of attempt ${quote(attempt)}: an attempt is a whole number from 0.`);
  }
  return `${stepId === '' ? setupLogName : stepId}.${attempt}`;
}
