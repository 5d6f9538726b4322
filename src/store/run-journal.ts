// The run store's creation journal (DESIGN §5, DECISIONS "New runs are made durable by a journal"):
//   runs/journal-<n>.jsonl   one { run } line per new run or newer state of a run it holds, one
//                            { deleted } line per deletion
//
// A new run is durable once its line is on disk; the runs created at the same time share that
// synced write (group commit), so a burst of webhooks costs one disk flush per batch, not two
// fsyncs per run. Until its run.json is written, a run's newer states (`update`) go to the journal
// the same way, the latest line of a run winning when the journals are read. Each run's own run.json is written afterwards by the run store, which asks `due`
// for them, oldest first, once new runs pause: while a burst lasts, the disk and the CPU stay with
// the journal. A journal is removed once every run it holds has its run.json and every deletion it
// records is finished; after a crash, `recover` finds the runs whose run.json never landed.
// The run store calls the journal; the journal never calls the store.

import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pipeline, Run } from '../core/api';
import { ValidationError, errorMessage, quote } from '../core/errors';
import { isId } from '../core/ids';
import { setTimer } from '../core/timers';
import { isRecord } from '../core/validate';
import { syncFolder } from './atomic';
import { readJsonLines, type JsonlAppender } from './jsonl';

/** The pause in new runs that `due` waits for before handing out their run.json. */
const quietBeforeWritingMs = 250;
/**
 * Beyond this many runs without a run.json, `due` hands them out even while new runs keep
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
  /** The clock that times the pause `due` waits for; tests drive one by hand. Default: performance.now() and setTimeout. */
  clock?: JournalClock;
}

/** What the journal reads the time from, and sets its timer with. */
export interface JournalClock {
  /** Milliseconds from any fixed point. */
  now(): number;
  /** Calls `wake` once `ms` milliseconds have passed (never before returning); returns what cancels that. */
  after(ms: number, wake: () => void): () => void;
}

/** performance.now() and setTimeout. */
const realClock: JournalClock = {
  now: () => performance.now(),
  after(ms, wake) {
    const timer = setTimer(wake, ms);
    return () => clearTimeout(timer);
  },
};

/** What the journals on disk hold, read at start. */
interface JournalContents {
  /** The runs recorded, by id, as they were created (not checked beyond their id), with their journal. */
  runs: Map<string, { run: Record<string, unknown>; journal: number }>;
  /** The run ids whose deletion was recorded. */
  deleted: Set<string>;
  /** The journal numbers found, ascending. */
  numbers: number[];
}

/** The runs/ folder as read at start: each run folder's run, or the problem that kept it out. */
export interface LoadedRuns {
  runs: Map<string, Run>;
  problems: Map<string, string>;
}

/** A run whose creation is (being) journaled and whose run.json is not written yet. */
interface UnwrittenRun {
  run: Run;
  /** The journal holding its creation, and the one holding its latest state. */
  journal: number;
  latest: number;
  /** The journal write; a run whose write failed was never created and is not written either. */
  journaled: Promise<unknown>;
}

/** The JSON of frozen pipeline snapshots, each shared by the runs of one pipeline version (RunService's snapshotOf). */
const snapshotJson = new WeakMap<Pipeline, string>();

/** A `{ run }` line. A frozen pipeline snapshot is serialised once, not once per run and state. */
function runLine(run: Run): string {
  const { pipeline } = run;
  if (!pipeline || !Object.isFrozen(pipeline)) return `${JSON.stringify({ run })}\n`;
  let json = snapshotJson.get(pipeline);
  if (json === undefined) snapshotJson.set(pipeline, (json = JSON.stringify(pipeline)));
  const { pipeline: _snapshot, ...rest } = run;
  const head = JSON.stringify(rest);
  return `{"run":${head.slice(0, -1)},"pipeline":${json}}}\n`;
}

export class RunJournal {
  readonly #runsDir: string;
  readonly #appender: JsonlAppender;
  readonly #rotateLines: number;
  readonly #quietBeforeWritingMs: number;
  readonly #maxUnwrittenRuns: number;
  readonly #clock: JournalClock;

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

  /** The path of the journal last asked for (the current one, nearly always). */
  #path = { number: 0, path: '' };
  /** Set by `close`: `due` ends after the run it handed out. */
  #closed = false;
  /** When the latest run was added (by `#clock`): `due` waits for a pause. */
  #lastAdded = -Infinity;
  /** Callers of `flush` waiting: `due` does not wait for a pause meanwhile. */
  #hurry = 0;
  /** Ends the wait of `due` (for a pause, or for a new run) at once. */
  #wake: (() => void) | undefined;
  /** Whether `due` waits for a new run. */
  #idle = false;

  constructor(runsDir: string, appender: JsonlAppender, options: RunJournalOptions = {}) {
    this.#runsDir = runsDir;
    this.#appender = appender;
    this.#rotateLines = options.rotateLines ?? rotateLines;
    this.#quietBeforeWritingMs = options.quietBeforeWritingMs ?? quietBeforeWritingMs;
    this.#maxUnwrittenRuns = options.maxUnwrittenRuns ?? maxUnwrittenRuns;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Records a new run; resolves once the record is durable (sharing the write with every run added
   * meanwhile). `due` then hands it out for its run.json, unless `written` says it is written already.
   */
  add(run: Run): Promise<void> {
    const id: unknown = isRecord(run) ? run.id : undefined;
    if (!isId(id, 'run')) return Promise.reject(new ValidationError(`Cannot save a run with the id ${quote(id)}: it is not a run id.`));
    const journal = this.#number;
    const journaled = this.#append(runLine(run));
    // Listed before the write finishes, so the journal cannot be retired under it.
    this.#unwritten.set(run.id, { run, journal, latest: journal, journaled });
    if (this.#lines >= this.#rotateLines) this.#rotate();
    this.#lastAdded = this.#clock.now();
    if (this.#idle || this.#unwritten.size >= this.#maxUnwrittenRuns) this.#wake?.();
    return journaled;
  }

  /** True while the journal holds run `id` and its run.json is not written yet. */
  holds(id: string): boolean {
    return this.#unwritten.has(id);
  }

  /**
   * Records a newer state of a run the journal holds (see `holds`; else nothing is recorded);
   * resolves once it is durable, sharing the synced write as `add` does. Its run.json, once due, is
   * written from the run as it is then.
   */
  update(run: Run): Promise<void> {
    const entry = this.#unwritten.get(run.id);
    if (!entry) return Promise.reject(new Error(`The journal does not hold run ${run.id}`));
    entry.run = run;
    entry.latest = this.#number;
    const journaled = this.#append(runLine(run));
    if (this.#lines >= this.#rotateLines) this.#rotate();
    return journaled;
  }

  /**
   * Records that run `id` is being deleted, then runs `removeFolder`; resolves when both are done.
   * The record is durable before the folder goes, so a crash mid-way cannot bring the run back,
   * and the journal holding it stays until the folder is gone.
   */
  recordDeletion(id: string, removeFolder: () => Promise<void>): Promise<void> {
    const deletion = this.#append(`${JSON.stringify({ deleted: id })}\n`).then(async () => {
      await removeFolder();
      this.written(id);
    });
    const settled = deletion.then(() => undefined, () => undefined);
    this.#deletions.add(settled);
    void settled.then(() => this.#deletions.delete(settled));
    return deletion;
  }

  /** Run `id` has its run.json now (or, deleted, needs none): `due` skips it. */
  written(id: string): void {
    if (!this.#unwritten.delete(id)) return;
    for (const listener of this.#unwrittenListeners) listener();
  }

  /** Run `id`'s run.json could not be written: its journal stays, so the next start recovers it. */
  unwritable(id: string, error: unknown): void {
    const entry = this.#unwritten.get(id);
    if (entry) for (let number = entry.journal; number <= entry.latest; number++) this.#kept.add(number);
    console.error(`Writing run ${id} failed: ${errorMessage(error)}; the next start recovers it from its journal`);
    this.written(id);
  }

  /**
   * The new runs whose run.json is due, oldest first, one at a time, once new runs stop coming for
   * a moment (or the backlog is very large, or `flush` waits); between runs it waits for more, and
   * it ends when the journal is closed. The caller writes each run before asking for the next and
   * reports it with `written` or `unwritable`. A run whose journal write failed was never created
   * and is skipped. One caller at a time.
   */
  async *due(): AsyncGenerator<Run> {
    while (!this.#closed) {
      const next = this.#unwritten.values().next();
      if (next.done) {
        this.#idle = true;
        await this.#pause();
        this.#idle = false;
        continue;
      }
      const busyFor = this.#quietBeforeWritingMs - (this.#clock.now() - this.#lastAdded);
      if (busyFor > 0 && this.#hurry === 0 && this.#unwritten.size < this.#maxUnwrittenRuns) {
        await this.#pause(busyFor);
        continue;
      }
      const { run, journaled } = next.value;
      if (await journaled.then(() => true, () => false)) yield run;
      this.written(run.id);
    }
  }

  /** Reads every journal in runs/ (at start, before anything is added). */
  async read(): Promise<JournalContents> {
    const runs: JournalContents['runs'] = new Map();
    const deleted = new Set<string>();
    const names = await readdir(this.#runsDir).catch(() => [] as string[]);
    const numbers = names.map((name) => /^journal-(\d{1,9})\.jsonl$/.exec(name)?.[1]).filter((number): number is string => number !== undefined).map(Number).sort((a, b) => a - b);
    for (const number of numbers) {
      for (const record of await readJsonLines<unknown>(this.#file(number))) {
        if (!isRecord(record)) continue;
        if (typeof record.deleted === 'string') deleted.add(record.deleted);
        else if (isRecord(record.run) && isId(record.run.id, 'run')) runs.set(record.run.id, { run: record.run, journal: number });
      }
    }
    return { runs, deleted, numbers };
  }

  /**
   * After `read`, with what the run folders hold: the runs the journals recorded whose run.json
   * never landed (a crash in between) join `loaded`, in place of the problem their folder
   * reported, if they have a run's shape (`runProblem`). Those runs are then due for their
   * run.json; new records go to a fresh journal, and the old ones go once nothing needs them.
   * Returns every run, oldest first (by id), and the problems left.
   */
  recover(contents: JournalContents, loaded: LoadedRuns, runProblem: (value: unknown, id: string) => string | undefined): { runs: Run[]; problems: string[] } {
    this.#number = (contents.numbers.at(-1) ?? 0) + 1;
    this.#lines = 0;
    const runs = [...loaded.runs.values()];
    for (const [id, { run, journal }] of contents.runs) {
      if (loaded.runs.has(id) || contents.deleted.has(id) || runProblem(run, id) !== undefined) continue;
      runs.push(run as unknown as Run);
      loaded.problems.delete(id);
      this.#unwritten.set(id, { run: run as unknown as Run, journal: contents.numbers[0]!, latest: journal, journaled: Promise.resolve() });
    }
    for (const number of contents.numbers) this.#retire(number);
    this.#wake?.(); // the recovered runs are due
    runs.sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
    return { runs, problems: [...loaded.problems.values()] };
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

  /** Ends `due` after the run it handed out; the runs left stay in their journals. */
  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /**
   * Appends a record to the current journal; resolves once it is durable. The first record of a
   * journal also makes the new file's name durable (a runs/ folder sync), and every record waits
   * for that.
   */
  async #append(line: string): Promise<void> {
    const number = this.#number;
    this.#lines += 1;
    await this.#appender.appendLines(this.#file(number), line, { sync: true });
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

  /** Waits `ms` by `#clock` (no `ms`: no timer), or less when `#wake` is called. */
  #pause(ms?: number): Promise<void> {
    return new Promise<void>((resolvePromise) => {
      const wake = () => {
        cancel?.();
        this.#wake = undefined;
        resolvePromise();
      };
      const cancel = ms === undefined ? undefined : this.#clock.after(ms, wake);
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
    if (this.#path.number !== number) this.#path = { number, path: join(this.#runsDir, `journal-${number}.jsonl`) };
    return this.#path.path;
  }
}
