// Runs and their logs in the data folder (DESIGN §5):
//   runs/<run-id>/run.json                      the full run, replaced atomically
//   runs/<run-id>/logs/<step>.<attempt>.jsonl   one { ts, stream, line } per line; setup: _setup.0.jsonl
//   runs/journal-<n>.jsonl                      new runs and deletions, until their folders are on disk
// Every id, step id and attempt is checked before it becomes part of a path.
//
// A new run is durable once its line in the creation journal is on disk; the runs created at the
// same time share that write (group commit). Its run.json is written afterwards by one background
// writer, oldest first, once new runs pause: a burst of new runs costs one synced write per batch
// instead of two fsyncs per run, and nothing crowds out the journal's writes. A journal is removed
// once every run it holds has its run.json; after a crash, `loadAll` takes the runs still missing
// one from the journals and writes them in the same way.

import { mkdir as mkdirWithCallback, readFile as readFileWithCallback } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { LogLine, Run, RunStatus } from '../core/api';
import { ValidationError, errorMessage, quote } from '../core/errors';
import { isId } from '../core/ids';
import { isPlainObject } from '../core/settings';
import { removeStaleTempFiles, syncFolder } from './atomic';
import { CorruptFileError, readTextFile } from './json-file';
import { readJsonLines, readJsonLinesReport, type JsonlAppender } from './jsonl';
import type { FileWriter } from './writer';

const stepIdPattern = /^[a-z][a-z0-9_-]{0,39}$/;
const attemptPattern = /^(?:0|[1-9][0-9]*)$/;
const setupLogName = '_setup';
const runStatuses: ReadonlySet<RunStatus> = new Set<RunStatus>(['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'rejected']);
const logStreams: ReadonlySet<unknown> = new Set(['out', 'err', 'info']);

// For thousands of small files the callback API is about twice as fast as `fs/promises` on
// Node 20 (no FileHandle objects, fewer round trips to the thread pool).
const readFileQuickly = promisify(readFileWithCallback);

/** run.json files read at once by `loadAll`: enough to keep the disk busy, few enough for the descriptor limit. */
const loadConcurrency = 64;
/** Run folders swept for temp files at once, in the background after `loadAll`. */
const sweepConcurrency = 8;
/** The pause in new runs that the background writer waits for before writing their run.json. */
const quietBeforeWritingMs = 250;
/**
 * Beyond this many runs without a run.json, the background writer works even while new runs keep
 * coming: it bounds what the journals hold, and so what a start after a crash must read (about
 * a second for this many).
 */
const maxUnwrittenRuns = 50_000;
/** Lines a creation journal takes before new runs go to the next one (unless the options say). */
const journalRotateLines = 5000;

/** Tests make these small; the defaults are the constants above. */
export interface RunStoreOptions {
  journalRotateLines?: number;
  quietBeforeWritingMs?: number;
  maxUnwrittenRuns?: number;
}

/** A log line as stored: where it belongs is in the file name. */
interface LogRecord {
  ts: number | undefined;
  stream: LogLine['stream'] | undefined;
  line: string;
}

/** A run whose creation is (being) journaled and whose run.json is not written yet. */
interface UnwrittenRun {
  run: Run;
  /** The journal holding it. */
  journal: number;
  /** The journal write; a run whose write failed was never created and is not written either. */
  journaled: Promise<unknown>;
}

/** The lines of one appendLogs call that go to one file. */
interface LogBatch {
  runId: string;
  stepId: string;
  attempt: number;
  fileName: string;
  records: LogRecord[];
}

/**
 * Reads and writes runs and their logs. Writes of one run's run.json are coalesced (the latest
 * state wins); log appends are batched per file. A deleted run stays deleted: later saves and
 * appends for its id are dropped, so a straggler cannot bring its folder back.
 */
export class RunStore {
  readonly #runsDir: string;
  readonly #writer: FileWriter;
  readonly #appender: JsonlAppender;
  /** Run ids deleted (or being deleted) by this process. */
  readonly #deleted = new Set<string>();
  /** Run folders created (or being created) by this process, by run id. */
  readonly #folders = new Map<string, Promise<void>>();
  readonly #saves = new PendingWork();
  readonly #appends = new PendingWork();
  /** Deletions under way: a journal holding a deletion stays until its folder is gone. */
  readonly #deletions = new PendingWork();
  /** New runs without a run.json yet, oldest first; written by `#writeUnwritten`, one at a time. */
  readonly #unwritten = new Map<string, UnwrittenRun>();
  #writingUnwritten = false;
  /** Set by `close`: the background writer stops after its current write. */
  #closed = false;
  /** When the latest run was created (performance.now()): the background writer waits for a pause. */
  #lastCreated = -Infinity;
  /** Callers of `flush` waiting: the background writer does not wait for a pause meanwhile. */
  #hurry = 0;
  /** Ends the background writer's wait for a pause at once. */
  #wake: (() => void) | undefined;
  /** Called whenever a run leaves `#unwritten` (journal retirement waits on them). */
  #unwrittenListeners = new Set<() => void>();
  /** Journals kept for the next start: a run in them could not get its run.json. */
  readonly #keptJournals = new Set<number>();
  /** The temp file sweep started by the latest `loadAll`; never rejects. */
  #sweep: Promise<void> = Promise.resolve();
  /** The creation journal new runs are appended to (runs/journal-<n>.jsonl), and its line count. */
  #journalNumber = 1;
  #journalLines = 0;
  /** The newest journal whose file name is known durable, and the runs/ folder sync under way. */
  #durableJournal = 0;
  #syncingFolder: Promise<void> | undefined;
  /** Older journals, removed once every run they hold has its own durable run.json. */
  #retiring: Promise<void> = Promise.resolve();

  readonly #journalRotateLines: number;
  readonly #quietBeforeWritingMs: number;
  readonly #maxUnwrittenRuns: number;

  /** `dataDir` is the data folder; `writer` and `appender` are the data store's, shared with its other files. */
  constructor(dataDir: string, writer: FileWriter, appender: JsonlAppender, options: RunStoreOptions = {}) {
    this.#runsDir = join(resolve(dataDir), 'runs');
    this.#writer = writer;
    this.#appender = appender;
    this.#journalRotateLines = options.journalRotateLines ?? journalRotateLines;
    this.#quietBeforeWritingMs = options.quietBeforeWritingMs ?? quietBeforeWritingMs;
    this.#maxUnwrittenRuns = options.maxUnwrittenRuns ?? maxUnwrittenRuns;
  }

  /**
   * Writes runs/<id>/run.json atomically, creating the folder as needed; resolves once this state
   * (or a newer one) is durable. Saves of one run coalesce: the run is serialised when its write
   * starts, and only the latest state is written. An id that is not a run id rejects with
   * ValidationError and touches nothing. A save for a deleted run resolves without writing.
   */
  save(run: Run): Promise<void> {
    const id: unknown = isPlainObject(run) ? run.id : undefined;
    if (!isId(id, 'run')) return Promise.reject(new ValidationError(`Cannot save a run with the id ${quote(id)}: it is not a run id.`));
    if (this.#deleted.has(id)) return Promise.resolve();
    const path = this.#runFile(id);
    const write = () => this.#writer.write(path, () => JSON.stringify(run) + '\n', { mode: 0o600 });
    const saving = this.#ensureFolder(id).then(async () => {
      if (this.#deleted.has(id)) return;
      try {
        await write();
      } catch (error) {
        // The folder vanished under us (removed by hand): make it again, once.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || this.#deleted.has(id)) throw error;
        this.#folders.delete(id);
        await this.#ensureFolder(id);
        if (!this.#deleted.has(id)) await write();
      }
      this.#forgetUnwritten(id);
    });
    return this.#saves.track(id, saving);
  }

  /**
   * Makes a new run durable fast: the run is appended to the creation journal and fsynced, sharing
   * one write and one fsync with every other run created meanwhile (group commit). Resolves once
   * the journal entry is on disk; its run.json is written in the background (a `save` meanwhile
   * writes it sooner). After a crash, `loadAll` takes the run from the journal.
   */
  async create(run: Run): Promise<void> {
    const id: unknown = isPlainObject(run) ? run.id : undefined;
    if (!isId(id, 'run')) throw new ValidationError(`Cannot save a run with the id ${quote(id)}: it is not a run id.`);
    const journal = this.#journalNumber;
    const journaled = this.#appendToJournal({ run });
    // Listed before the write finishes, so the journal cannot be retired under it.
    this.#unwritten.set(id, { run, journal, journaled });
    if (this.#journalLines >= this.#journalRotateLines) this.#rotateJournal();
    this.#lastCreated = performance.now();
    if (this.#unwritten.size >= this.#maxUnwrittenRuns) this.#wake?.();
    this.#writeUnwritten();
    await journaled;
  }

  /**
   * Appends a record to the current journal; resolves once it is durable. The first record of a
   * journal also makes the new file's name durable (the runs/ folder is synced once), and every
   * record waits for that.
   */
  async #appendToJournal(record: object): Promise<void> {
    const number = this.#journalNumber;
    this.#journalLines += 1;
    await this.#appender.append(this.#journalFile(number), [record], { sync: true });
    // The file exists now; its name is durable once a folder sync started after this point ends.
    while (this.#durableJournal < number) {
      this.#syncingFolder ??= syncFolder(this.#runsDir)
        .then(() => {
          this.#durableJournal = Math.max(this.#durableJournal, number);
        })
        .finally(() => {
          this.#syncingFolder = undefined;
        });
      await this.#syncingFolder;
    }
  }

  /**
   * Writes the run.json of new runs, oldest first, one at a time, once new runs stop coming for a
   * moment (or the backlog is very large, or `flush` waits): while a burst lasts, the disk and the
   * CPU stay with the journal's group commits. A run that cannot be written keeps its journal, so
   * the next start recovers it.
   */
  async #writeUnwritten(): Promise<void> {
    if (this.#writingUnwritten || this.#closed) return;
    this.#writingUnwritten = true;
    try {
      for (let next = this.#unwritten.values().next(); !next.done && !this.#closed; next = this.#unwritten.values().next()) {
        const busyFor = this.#quietBeforeWritingMs - (performance.now() - this.#lastCreated);
        if (busyFor > 0 && this.#hurry === 0 && this.#unwritten.size < this.#maxUnwrittenRuns) {
          await new Promise<void>((resolvePromise) => {
            const timer = setTimeout(wake, busyFor);
            function wake() {
              clearTimeout(timer);
              resolvePromise();
            }
            this.#wake = wake;
          });
          this.#wake = undefined;
          continue;
        }
        const { run, journal, journaled } = next.value;
        if (await journaled.then(() => true, () => false)) {
          await this.save(run).catch((error) => {
            this.#keptJournals.add(journal);
            console.error(`Writing run ${run.id} failed: ${errorMessage(error)}; the next start recovers it from its journal`);
          });
        }
        this.#forgetUnwritten(run.id);
      }
    } finally {
      this.#writingUnwritten = false;
    }
  }

  #forgetUnwritten(id: string): void {
    if (!this.#unwritten.delete(id)) return;
    for (const listener of this.#unwrittenListeners) listener();
  }

  /** Resolves once no run held by journal `number` (or an older one) is without its run.json. */
  #writtenUpTo(number: number): Promise<void> {
    const done = () => {
      const oldest = this.#unwritten.values().next();
      return oldest.done || oldest.value.journal > number;
    };
    if (done()) return Promise.resolve();
    return new Promise((resolvePromise) => {
      const listener = () => {
        if (!done()) return;
        this.#unwrittenListeners.delete(listener);
        resolvePromise();
      };
      this.#unwrittenListeners.add(listener);
    });
  }

  /** Starts a new journal; the old one goes once its runs have their run.json. */
  #rotateJournal(): void {
    const old = this.#journalNumber;
    this.#journalNumber += 1;
    this.#journalLines = 0;
    this.#retireJournal(old);
  }

  /**
   * Removes journal `number` once every run it holds has its run.json and every deletion it
   * records is finished; the runs/ folder is fsynced first, so the run folders' own entries are
   * durable before the journal that could bring them back goes.
   */
  #retireJournal(number: number): void {
    this.#retiring = this.#retiring.then(async () => {
      await this.#writtenUpTo(number);
      await this.#deletions.settled();
      if (this.#keptJournals.has(number)) return;
      await syncFolder(this.#runsDir);
      await this.#appender.closeFile(this.#journalFile(number));
      await rm(this.#journalFile(number), { force: true });
    }).catch((error) => console.error(`Removing the run journal ${number} failed: ${errorMessage(error)}`));
  }

  #journalFile(number: number): string {
    return join(this.#runsDir, `journal-${number}.jsonl`);
  }

  /** The runs and deletions recorded in the creation journals, and the journal numbers found. */
  async #readJournals(): Promise<{ runs: Map<string, Run>; journalOf: Map<string, number>; deleted: Set<string>; numbers: number[] }> {
    const runs = new Map<string, Run>();
    const journalOf = new Map<string, number>();
    const deleted = new Set<string>();
    const names = await readdir(this.#runsDir).catch(() => [] as string[]);
    const numbers = names.map((name) => /^journal-(\d{1,9})\.jsonl$/.exec(name)?.[1]).filter((number): number is string => number !== undefined).map(Number).sort((a, b) => a - b);
    for (const number of numbers) {
      for (const record of await readJsonLines<{ run?: Run; deleted?: string }>(this.#journalFile(number))) {
        if (isPlainObject(record) && typeof record.deleted === 'string') deleted.add(record.deleted);
        else if (isPlainObject(record) && isPlainObject(record.run) && isId(record.run.id, 'run') && runProblem(record.run, record.run.id) === undefined) {
          runs.set(record.run.id, record.run as unknown as Run);
          journalOf.set(record.run.id, number);
        }
      }
    }
    return { runs, journalOf, deleted, numbers };
  }

  /**
   * Every run on disk, oldest first (by id). A run.json that is missing, unreadable, does not parse
   * or is not a run is left out, never deleted, and described in `problems` (one message naming
   * the file each). Entries of runs/ that are not run folders are ignored. Temp files that a crash
   * left in run folders are removed by a sweep that starts when the runs are read and goes on in
   * the background (it never touches a live write's temp file); `flush` waits for it.
   */
  async loadAll(): Promise<{ runs: Run[]; problems: string[] }> {
    let entries;
    try {
      entries = await readdir(this.#runsDir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { runs: [], problems: [] };
      throw error;
    }
    const journals = await this.#readJournals();
    for (const id of journals.deleted) this.#deleted.add(id);
    const ids = entries
      .filter((entry) => entry.isDirectory() && isId(entry.name, 'run') && !this.#deleted.has(entry.name))
      .map((entry) => entry.name)
      .sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
    // A deletion recorded in the journal whose folder a crash left behind is finished now.
    await Promise.all([...journals.deleted].map((id) => rm(join(this.#runsDir, id), { recursive: true, force: true }).catch(() => undefined)));
    const outcomes: (Run | string)[] = new Array(ids.length);
    await forEachBounded(ids, loadConcurrency, async (id, index) => {
      outcomes[index] = await this.#load(id);
    });
    // Listing every folder would double the start-up time; nothing waits for the sweep.
    this.#sweep = this.#sweep.then(() =>
      forEachBounded(ids, sweepConcurrency, (id) => removeStaleTempFiles(join(this.#runsDir, id)).then(() => undefined, () => undefined)),
    );
    let runs: Run[] = [];
    const problems: string[] = [];
    const onDisk = new Set<string>();
    for (const outcome of outcomes) {
      if (typeof outcome === 'string') problems.push(outcome);
      else {
        runs.push(outcome);
        onDisk.add(outcome.id);
      }
    }
    // Runs whose creation reached the journal but whose run.json did not (a crash in between):
    // they are written in the background, and their journals stay until they are.
    const recovered = [...journals.runs.values()].filter((run) => !onDisk.has(run.id) && !this.#deleted.has(run.id));
    if (recovered.length > 0) {
      runs = [...runs, ...recovered].sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
      const recoveredIds = new Set(recovered.map((run) => run.id));
      for (let index = problems.length - 1; index >= 0; index--) {
        if ([...recoveredIds].some((id) => problems[index]!.includes(id))) problems.splice(index, 1);
      }
      for (const run of recovered) this.#unwritten.set(run.id, { run, journal: journals.journalOf.get(run.id)!, journaled: Promise.resolve() });
      this.#writeUnwritten();
    }
    // New runs go to a fresh journal; the old ones go once their runs have their run.json.
    this.#journalNumber = (journals.numbers.at(-1) ?? 0) + 1;
    this.#journalLines = 0;
    for (const number of journals.numbers) this.#retireJournal(number);
    return { runs, problems };
  }

  /**
   * The full run from disk, or undefined when there is none (a deleted run, or an id that is not a
   * run id and so names nothing). A run.json that does not parse or is not this run throws
   * CorruptFileError naming the file.
   */
  async read(id: string): Promise<Run | undefined> {
    if (!isId(id, 'run') || this.#deleted.has(id)) return undefined;
    const path = this.#runFile(id);
    const text = await readTextFile(path);
    if (text === undefined) return undefined;
    const outcome = parseRun(id, text);
    if (typeof outcome === 'string') throw new CorruptFileError(path, outcome);
    return outcome;
  }

  /**
   * Removes runs/<id> with its logs. Waits for the run's saves and appends already under way, so
   * none lands after the folder is gone; later ones are dropped. Deleting a run that is not on
   * disk does nothing. An id that is not a run id rejects with ValidationError and touches nothing.
   */
  async delete(id: string): Promise<void> {
    if (!isId(id, 'run')) throw new ValidationError(`Cannot delete the run ${quote(id)}: it is not a run id.`);
    // From here on no save or append for this id is started, so waiting for those under way suffices.
    this.#deleted.add(id);
    // Tracked from the start, so a journal holding this deletion is not retired before the folder is gone.
    await this.#deletions.track(id, this.#deleteNow(id));
  }

  async #deleteNow(id: string): Promise<void> {
    // Recorded first, so a crash mid-way cannot bring the run back from the creation journal.
    await this.#appendToJournal({ deleted: id });
    await Promise.all([this.#saves.settled(id), this.#appends.settled(id)]);
    this.#folders.delete(id);
    await this.#saves.track(id, rm(join(this.#runsDir, id), { recursive: true, force: true }));
    this.#forgetUnwritten(id);
  }

  /**
   * Appends log lines (any mix of runs, steps and attempts) to their files, one batch per file;
   * resolves once written (not fsynced). Each line is stored as { ts, stream, line }. stepId ''
   * is the setup log. If any line has a malformed runId, stepId, attempt or line, this rejects
   * with ValidationError and nothing is written. Lines of deleted runs are dropped.
   */
  async appendLogs(lines: readonly LogLine[]): Promise<void> {
    const batches = new Map<string, LogBatch>();
    let batch: LogBatch | undefined;
    for (const logLine of lines) {
      if (!isPlainObject(logLine)) throw new ValidationError(`Cannot append the log line ${quote(logLine)}: it is not an object.`);
      const { runId, stepId, attempt, line, ts, stream } = logLine;
      if (typeof line !== 'string') throw new ValidationError(`Cannot append the log line ${quote(line)}: it is not text.`);
      if (ts !== undefined && !Number.isFinite(ts)) throw new ValidationError(`Cannot append a log line with the time ${quote(ts)}: it is not a time.`);
      if (stream !== undefined && !logStreams.has(stream)) throw new ValidationError(`Cannot append a log line to the stream ${quote(stream)}: it is not out, err or info.`);
      // Consecutive lines of one attempt, the usual case, skip the checks and the lookup.
      if (!batch || batch.runId !== runId || batch.stepId !== stepId || batch.attempt !== attempt) {
        const fileName = logFileName(runId, stepId, attempt, 'append');
        const key = runId + '/' + fileName;
        batch = batches.get(key);
        if (!batch) {
          batch = { runId, stepId, attempt, fileName, records: [] };
          batches.set(key, batch);
        }
      }
      // JSON leaves out the fields that are undefined.
      batch.records.push({ ts, stream, line });
    }
    const writes: Promise<void>[] = [];
    for (const { runId, fileName, records } of batches.values()) {
      if (this.#deleted.has(runId)) continue;
      writes.push(this.#appends.track(runId, this.#appender.append(this.#logFile(runId, fileName), records)));
    }
    await Promise.all(writes);
  }

  /**
   * The lines of one attempt's log, in order, as LogLine objects (runId, stepId and attempt filled
   * back in); lines whose appendLogs was called before this are included. [] when there is no such
   * log. A torn last line (a crash mid-append) and lines that do not parse are left out. A
   * malformed runId, stepId or attempt rejects with ValidationError.
   */
  async readLog(runId: string, stepId: string, attempt: number): Promise<LogLine[]> {
    const name = logFileName(runId, stepId, attempt, 'read');
    if (this.#deleted.has(runId)) return [];
    await this.#appends.settled(runId);
    const { records } = await readJsonLinesReport<unknown>(this.#logFile(runId, name));
    const lines: LogLine[] = [];
    for (const record of records) {
      if (!isPlainObject(record) || typeof record.line !== 'string') continue;
      const logLine: LogLine = { runId, stepId, attempt, line: record.line };
      if (typeof record.ts === 'number') logLine.ts = record.ts;
      if (logStreams.has(record.stream)) logLine.stream = record.stream as LogLine['stream'];
      lines.push(logLine);
    }
    return lines;
  }

  /** The attempt numbers that have a log for this step ('' = setup), ascending; [] when none. */
  async logAttempts(runId: string, stepId: string): Promise<number[]> {
    logFileName(runId, stepId, 0, 'list');
    if (this.#deleted.has(runId)) return [];
    let names: string[];
    try {
      names = await readdir(join(this.#runsDir, runId, 'logs'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const prefix = (stepId === '' ? setupLogName : stepId) + '.';
    const attempts: number[] = [];
    for (const name of names) {
      if (!name.startsWith(prefix) || !name.endsWith('.jsonl')) continue;
      const digits = name.slice(prefix.length, -'.jsonl'.length);
      if (attemptPattern.test(digits) && Number.isSafeInteger(Number(digits))) attempts.push(Number(digits));
    }
    return attempts.sort((left, right) => left - right);
  }

  /**
   * Resolves once every save and append made so far, every new run's run.json, the temp file
   * sweep and the removal of retired journals have settled (never rejects).
   */
  async flush(): Promise<void> {
    // After `close` the background writer is gone: what it left stays for the next start.
    if (!this.#closed) {
      this.#hurry += 1;
      this.#wake?.();
      try {
        await this.#writtenUpTo(Infinity);
      } finally {
        this.#hurry -= 1;
      }
    }
    await Promise.all([this.#saves.settledAll(), this.#appends.settledAll(), this.#deletions.settledAll(), this.#sweep]);
    if (!this.#closed) await this.#retiring;
  }

  /**
   * Stops for good: waits for the saves, appends and deletions under way, but not for the run.json
   * files of new runs still to be written: their journals stay, and the next start writes them.
   * (A burst of thousands of webhooks would otherwise hold up quitting for as long.)
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#wake?.();
    await Promise.all([this.#saves.settledAll(), this.#appends.settledAll(), this.#deletions.settledAll()]);
  }

  #runFile(id: string): string {
    return join(this.#runsDir, id, 'run.json');
  }

  #logFile(runId: string, name: string): string {
    return join(this.#runsDir, runId, 'logs', name);
  }

  /** Creates the run's folder once per process; concurrent saves share the same promise, so they stay in call order. */
  #ensureFolder(id: string): Promise<void> {
    let ready = this.#folders.get(id);
    if (!ready) {
      const creating = makeFolder(join(this.#runsDir, id));
      creating.catch(() => {
        if (this.#folders.get(id) === creating) this.#folders.delete(id);
      });
      this.#folders.set(id, creating);
      ready = creating;
    }
    return ready;
  }

  /** The run in runs/<id>/run.json, or a problem message naming the file. */
  async #load(id: string): Promise<Run | string> {
    const path = this.#runFile(id);
    const text = await readFileQuickly(path, 'utf8').catch((error: NodeJS.ErrnoException) => error);
    if (typeof text !== 'string') {
      const problem = text.code === 'ENOENT' ? 'the run folder has no run.json' : errorMessage(text);
      return new CorruptFileError(path, problem).message;
    }
    const outcome = parseRun(id, text);
    return typeof outcome === 'string' ? new CorruptFileError(path, outcome).message : outcome;
  }
}

// The callback API, and a plain mkdir first: `fs/promises` mkdir with `recursive` takes about
// four times as long on Node 20, and run folders are made one per run.
const mkdirQuickly = promisify(mkdirWithCallback);

/** Makes `folder` (its parent too, only when missing); one that already exists is fine. */
async function makeFolder(folder: string): Promise<void> {
  try {
    await mkdirQuickly(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') await mkdirQuickly(folder, { recursive: true });
    else if (code !== 'EEXIST') throw error;
  }
}

/** Calls `work` on each item, at most `concurrency` at a time; rejects with the first failure. */
async function forEachBounded<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * The file name of one attempt's log, after checking each part that goes into the path: the run
 * id, the step id (or '' for setup) and the attempt (a whole number from 0). Throws ValidationError.
 */
function logFileName(runId: unknown, stepId: unknown, attempt: unknown, action: 'append' | 'read' | 'list'): string {
  const what = action === 'append' ? 'Cannot append to' : action === 'read' ? 'Cannot read' : 'Cannot list';
  if (!isId(runId, 'run')) throw new ValidationError(`${what} the log of the run ${quote(runId)}: it is not a run id.`);
  if (stepId !== '' && (typeof stepId !== 'string' || !stepIdPattern.test(stepId))) {
    throw new ValidationError(`${what} the log of the step ${quote(stepId)}: it is not a step id.`);
  }
  if (!Number.isSafeInteger(attempt) || (attempt as number) < 0) {
    throw new ValidationError(`${what} the log of attempt ${quote(attempt)}: an attempt is a whole number from 0.`);
  }
  return `${stepId === '' ? setupLogName : stepId}.${attempt}.jsonl`;
}

/** The run in `text`, or why it is not one (a sentence fragment for CorruptFileError). */
function parseRun(id: string, text: string): Run | string {
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    return errorMessage(error);
  }
  const problem = runProblem(value, id);
  return problem === undefined ? (value as Run) : `it is not a run (${problem})`;
}

/** What makes `value` not the run `id`, or undefined when it has a run's shape. */
function runProblem(value: unknown, id: string): string | undefined {
  if (!isPlainObject(value)) return 'not a JSON object';
  if (value.id !== id) return `its id ${quote(value.id)} is not its folder's name`;
  for (const key of ['pipelineId', 'pipelineName', 'projectId'] as const) {
    if (typeof value[key] !== 'string') return `${key} is ${quote(value[key])}, not text`;
  }
  if (!runStatuses.has(value.status as RunStatus)) return `status is ${quote(value.status)}`;
  if (!Number.isFinite(value.createdAt)) return `createdAt is ${quote(value.createdAt)}, not a time`;
  if (!isPlainObject(value.variables)) return 'variables is not an object';
  if (!Array.isArray(value.steps) || !value.steps.every((step) => isPlainObject(step) && typeof step.id === 'string')) {
    return 'steps is not a list of steps';
  }
  return undefined;
}

/** Promises under way, by key (a run id); waiting on them never rejects. */
class PendingWork {
  readonly #pending = new Map<string, Set<Promise<unknown>>>();

  /** Registers `promise` under `key` until it settles; returns it unchanged. */
  track<T>(key: string, promise: Promise<T>): Promise<T> {
    let set = this.#pending.get(key);
    if (!set) {
      set = new Set();
      this.#pending.set(key, set);
    }
    set.add(promise);
    const forget = () => {
      set.delete(promise);
      if (set.size === 0 && this.#pending.get(key) === set) this.#pending.delete(key);
    };
    promise.then(forget, forget);
    return promise;
  }

  /**
   * Resolves once what is under `key` (every key, when none is given) now has settled; what is
   * added later is not waited for, so a run that keeps logging cannot keep a reader waiting.
   */
  async settled(key?: string): Promise<void> {
    const sets = key === undefined ? [...this.#pending.values()] : [this.#pending.get(key) ?? new Set()];
    await Promise.allSettled(sets.flatMap((set) => [...set]));
  }

  /** Resolves once everything under every key, including what is added while waiting, has settled. */
  async settledAll(): Promise<void> {
    while (this.#pending.size > 0) {
      await Promise.allSettled([...this.#pending.values()].flatMap((set) => [...set]));
    }
  }
}
