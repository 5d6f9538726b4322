// The run store's creation journal (DESIGN §5, DECISIONS "New runs are made durable by a journal"):
//   runs/journal-<n>.jsonl   one { run } line per new run, one { deleted } line per deletion
//
// A new run is durable once its line is on disk; the runs created at the same time share that
// synced write (group commit), so a burst of webhooks costs one disk flush per batch, not two
// fsyncs per run. Each run's own run.json is written afterwards, by one background writer, oldest
// first, once new runs pause: while a burst lasts, the disk and the CPU stay with the journal. A
// journal is removed once every run it holds has its run.json and every deletion it records is
// finished; after a crash, the next start reads the journals and writes what is missing.

import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Run } from '../core/api';
import { errorMessage } from '../core/errors';
import { isId } from '../core/ids';
import { isPlainObject } from '../core/settings';
import { syncFolder } from './atomic';
import { readJsonLines, type JsonlAppender } from './jsonl';

/** The pause in new runs that the background writer waits for before writing their run.json. */
const quietBeforeWritingMs = 250;
/**
 * Beyond this many runs without a run.json, the background writer works even while new runs keep
 * coming: it bounds what the journals hold, and so what a start after a crash must read (about
 * a second for this many).
 */
const maxUnwrittenRuns = 50_000;
/** Lines a journal takes before new records go to the next one. */
const rotateLines = 5000;

/** Tests make these small; the defaults are the constants above. */
export interface RunJournalOptions {
  rotateLines?: number;
  quietBeforeWritingMs?: number;
  maxUnwrittenRuns?: number;
}

/** What the journals on disk hold, read at start. */
export interface JournalContents {
  /** The runs recorded, by id, as they were created (not checked beyond their id), with their journal. */
  runs: Map<string, { run: Record<string, unknown>; journal: number }>;
  /** The run ids whose deletion was recorded. */
  deleted: Set<string>;
  /** The journal numbers found, ascending. */
  numbers: number[];
}

/** A run whose creation is (being) journaled and whose run.json is not written yet. */
interface UnwrittenRun {
  run: Run;
  /** The journal holding it. */
  journal: number;
  /** The journal write; a run whose write failed was never created and is not written either. */
  journaled: Promise<unknown>;
}

export class RunJournal {
  readonly #runsDir: string;
  readonly #appender: JsonlAppender;
  /** Writes a run's run.json (the run store's `save`); resolves once it is durable. */
  readonly #writeRun: (run: Run) => Promise<void>;
  readonly #rotateLines: number;
  readonly #quietBeforeWritingMs: number;
  readonly #maxUnwrittenRuns: number;

  /** The journal new records go to, and its line count. */
  #number = 1;
  #lines = 0;
  /** The newest journal whose file name is known durable, and the runs/ folder sync under way. */
  #durableNumber = 0;
  #syncingFolder: Promise<void> | undefined;
  /** New runs without a run.json yet, oldest first. */
  readonly #unwritten = new Map<string, UnwrittenRun>();
  /** Called whenever a run leaves `#unwritten` (retirement waits on them). */
  readonly #unwrittenListeners = new Set<() => void>();
  /** Deletions under way: a journal holding a deletion stays until its folder is gone. */
  readonly #deletions = new Set<Promise<void>>();
  /** Journals kept for the next start: a run in them could not get its run.json. */
  readonly #kept = new Set<number>();
  /** Removals of older journals, one after another. */
  #retiring: Promise<void> = Promise.resolve();

  // The background writer.
  #writing = false;
  /** Set by `close`: the writer stops after its current write. */
  #closed = false;
  /** When the latest run was added (performance.now()): the writer waits for a pause. */
  #lastAdded = -Infinity;
  /** Callers of `flush` waiting: the writer does not wait for a pause meanwhile. */
  #hurry = 0;
  /** Ends the writer's wait for a pause at once. */
  #wake: (() => void) | undefined;

  constructor(runsDir: string, appender: JsonlAppender, writeRun: (run: Run) => Promise<void>, options: RunJournalOptions = {}) {
    this.#runsDir = runsDir;
    this.#appender = appender;
    this.#writeRun = writeRun;
    this.#rotateLines = options.rotateLines ?? rotateLines;
    this.#quietBeforeWritingMs = options.quietBeforeWritingMs ?? quietBeforeWritingMs;
    this.#maxUnwrittenRuns = options.maxUnwrittenRuns ?? maxUnwrittenRuns;
  }

  /**
   * Records a new run; resolves once the record is durable (sharing the write with every run added
   * meanwhile). Its run.json is then written in the background, unless `written` says it already is.
   */
  add(run: Run): Promise<void> {
    const journal = this.#number;
    const journaled = this.#append({ run });
    // Listed before the write finishes, so the journal cannot be retired under it.
    this.#unwritten.set(run.id, { run, journal, journaled });
    if (this.#lines >= this.#rotateLines) this.#rotate();
    this.#lastAdded = performance.now();
    if (this.#unwritten.size >= this.#maxUnwrittenRuns) this.#wake?.();
    void this.#writeUnwritten();
    return journaled;
  }

  /**
   * Records that run `id` is being deleted, then runs `removeFolder`; resolves when both are done.
   * The record is durable before the folder goes, so a crash mid-way cannot bring the run back,
   * and the journal holding it stays until the folder is gone.
   */
  recordDeletion(id: string, removeFolder: () => Promise<void>): Promise<void> {
    const deletion = this.#append({ deleted: id }).then(async () => {
      await removeFolder();
      this.written(id);
    });
    const settled = deletion.then(() => undefined, () => undefined);
    this.#deletions.add(settled);
    void settled.then(() => this.#deletions.delete(settled));
    return deletion;
  }

  /** Run `id` has its run.json now (or, deleted, needs none): the background writer skips it. */
  written(id: string): void {
    if (!this.#unwritten.delete(id)) return;
    for (const listener of this.#unwrittenListeners) listener();
  }

  /** Reads every journal in runs/ (at start, before anything is added). */
  async read(): Promise<JournalContents> {
    const runs: JournalContents['runs'] = new Map();
    const deleted = new Set<string>();
    const names = await readdir(this.#runsDir).catch(() => [] as string[]);
    const numbers = names.map((name) => /^journal-(\d{1,9})\.jsonl$/.exec(name)?.[1]).filter((number): number is string => number !== undefined).map(Number).sort((a, b) => a - b);
    for (const number of numbers) {
      for (const record of await readJsonLines<unknown>(this.#file(number))) {
        if (!isPlainObject(record)) continue;
        if (typeof record.deleted === 'string') deleted.add(record.deleted);
        else if (isPlainObject(record.run) && isId(record.run.id, 'run')) runs.set(record.run.id, { run: record.run, journal: number });
      }
    }
    return { runs, deleted, numbers };
  }

  /**
   * After `read`: new records go to a fresh journal; `missing` (runs the journals hold whose
   * run.json never landed) are written in the background, and the old journals go once they are.
   */
  resume(contents: JournalContents, missing: readonly Run[]): void {
    this.#number = (contents.numbers.at(-1) ?? 0) + 1;
    this.#lines = 0;
    for (const run of missing) this.#unwritten.set(run.id, { run, journal: contents.runs.get(run.id)?.journal ?? 0, journaled: Promise.resolve() });
    if (missing.length > 0) void this.#writeUnwritten();
    for (const number of contents.numbers) this.#retire(number);
  }

  /** Resolves once every new run has its run.json and retired journals are gone (never rejects). */
  async flush(): Promise<void> {
    // After `close` the writer is gone: what it left stays for the next start.
    if (this.#closed) return;
    this.#hurry += 1;
    this.#wake?.();
    try {
      await this.#writtenUpTo(Infinity);
    } finally {
      this.#hurry -= 1;
    }
    await Promise.all([...this.#deletions]);
    await this.#retiring;
  }

  /** Stops the background writer after its current write; the runs it leaves stay in their journals. */
  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /**
   * Appends a record to the current journal; resolves once it is durable. The first record of a
   * journal also makes the new file's name durable (a runs/ folder sync), and every record waits
   * for that.
   */
  async #append(record: object): Promise<void> {
    const number = this.#number;
    this.#lines += 1;
    await this.#appender.append(this.#file(number), [record], { sync: true });
    // The file exists now; its name is durable once a folder sync started after this point ends.
    while (this.#durableNumber < number) {
      this.#syncingFolder ??= syncFolder(this.#runsDir)
        .then(() => {
          this.#durableNumber = Math.max(this.#durableNumber, number);
        })
        .finally(() => {
          this.#syncingFolder = undefined;
        });
      await this.#syncingFolder;
    }
  }

  /**
   * Writes the run.json of new runs, oldest first, one at a time, once new runs stop coming for a
   * moment (or the backlog is very large, or `flush` waits). A run that cannot be written keeps
   * its journal, so the next start recovers it.
   */
  async #writeUnwritten(): Promise<void> {
    if (this.#writing || this.#closed) return;
    this.#writing = true;
    try {
      for (let next = this.#unwritten.values().next(); !next.done && !this.#closed; next = this.#unwritten.values().next()) {
        const busyFor = this.#quietBeforeWritingMs - (performance.now() - this.#lastAdded);
        if (busyFor > 0 && this.#hurry === 0 && this.#unwritten.size < this.#maxUnwrittenRuns) {
          await this.#pause(busyFor);
          continue;
        }
        const { run, journal, journaled } = next.value;
        if (await journaled.then(() => true, () => false)) {
          await this.#writeRun(run).catch((error) => {
            this.#kept.add(journal);
            console.error(`Writing run ${run.id} failed: ${errorMessage(error)}; the next start recovers it from its journal`);
          });
        }
        this.written(run.id);
      }
    } finally {
      this.#writing = false;
    }
  }

  /** Waits `ms`, or less when `#wake` is called. */
  #pause(ms: number): Promise<void> {
    return new Promise<void>((resolvePromise) => {
      const wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolvePromise();
      };
      const timer = setTimeout(wake, ms);
      this.#wake = wake;
    });
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
  #rotate(): void {
    const old = this.#number;
    this.#number += 1;
    this.#lines = 0;
    this.#retire(old);
  }

  /**
   * Removes journal `number` once every run it holds has its run.json and every deletion under way
   * is finished; the runs/ folder is synced first, so the run folders' own names are durable
   * before the journal that could bring them back goes.
   */
  #retire(number: number): void {
    this.#retiring = this.#retiring.then(async () => {
      await this.#writtenUpTo(number);
      await Promise.all([...this.#deletions]);
      if (this.#kept.has(number)) return;
      await syncFolder(this.#runsDir);
      await this.#appender.closeFile(this.#file(number));
      await rm(this.#file(number), { force: true });
    }).catch((error) => console.error(`Removing the run journal ${number} failed: ${errorMessage(error)}`));
  }

  #file(number: number): string {
    return join(this.#runsDir, `journal-${number}.jsonl`);
  }
}
