// Runs in the data folder (DESIGN §5): one job, each run's run.json read, written and deleted.
//   runs/<run-id>/run.json   the full run, replaced atomically
//   runs/<run-id>/logs/      the run's logs (run-log-store.ts), removed with the run
//   runs/journal-<n>.jsonl   new runs and deletions (run-journal.ts)
// Every run id is checked before it becomes part of a path.

import { mkdir as mkdirWithCallback, readFile as readFileWithCallback } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Run, RunStatus } from '../core/api';
import { ValidationError, errorMessage, quote } from '../core/errors';
import { isId } from '../core/ids';
import { isFinished } from '../core/runs';
import { isRecord } from '../core/validate';
import { removeStaleTempFiles } from './atomic';
import { CorruptFileError, readTextFile } from './json-file';
import type { JsonlAppender } from './jsonl';
import { RunJournal, type LoadedRuns, type RunJournalOptions } from './run-journal';
import { RunLogStore } from './run-log-store';
import { PendingWork, Turns, forEachBounded } from './work';
import type { FileWriter } from './writer';

const runStatuses: ReadonlySet<RunStatus> = new Set<RunStatus>(['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'rejected']);

// For thousands of small files the callback API is about twice as fast as `fs/promises` on
// Node 20 (no FileHandle objects, fewer round trips to the thread pool).
const readFileQuickly = promisify(readFileWithCallback);

/** run.json files read at once by `loadAll`: enough to keep the disk busy, few enough for the descriptor limit. */
const loadConcurrency = 64;
/** Run folders swept for temp files at once, in the background after `loadAll`. */
const sweepConcurrency = 8;
/**
 * run.json writes under way at once. Each is a mkdir, a write, two fsyncs and a rename on libuv's
 * four threads, which the journal's synced appends share: a burst of runs changing state (a
 * webhook burst on an approval pipeline) would otherwise queue every acknowledgement behind them.
 * Saves of a run waiting for their turn coalesce into one write.
 */
const saveConcurrency = 2;
/** Tests make the journal's limits small. */
export type RunStoreOptions = RunJournalOptions;

/**
 * Reads and writes runs; their logs through `logs`. Writes of one run's run.json are coalesced
 * (the latest state wins). A deleted run stays deleted: later saves and log appends for its id
 * are dropped, so a straggler cannot bring its folder back.
 */
export class RunStore {
  readonly #runsDir: string;
  readonly #writer: FileWriter;
  /** Run ids deleted (or being deleted) by this process. */
  readonly #deleted = new Set<string>();
  /** Run folders created (or being created) by this process, by run id. */
  readonly #folders = new Map<string, Promise<void>>();
  readonly #saves = new PendingWork();
  /** The runs' logs; a run's deletion waits for its appends under way. */
  readonly logs: RunLogStore;
  /** run.json writes take turns, `saveConcurrency` at a time. */
  readonly #saveTurns = new Turns(saveConcurrency);
  /** Saves waiting for their turn, by run id, with the latest state asked for. */
  readonly #waitingSaves = new Map<string, { run: Run; saved: Promise<void> }>();
  /** New runs and deletions, made durable before their folders are written or removed. */
  readonly #journal: RunJournal;
  /**
   * Where a new run is created (the engine's startRun): `add` resolves once its journal line is on
   * disk, sharing the synced write with every run created meanwhile. Its run.json is written in
   * the background (a `save` meanwhile writes it sooner); after a crash, `loadAll` takes the run
   * from the journal (run-journal.ts).
   */
  readonly journal: Pick<RunJournal, 'add'>;
  /** The temp file sweep started by the latest `loadAll`; never rejects. */
  #sweep: Promise<void> = Promise.resolve();

  /** `dataDir` is the data folder; `writer` and `appender` (for the journal) are the data store's, shared with its other files. */
  constructor(dataDir: string, writer: FileWriter, appender: JsonlAppender, options: RunStoreOptions = {}) {
    this.#runsDir = join(resolve(dataDir), 'runs');
    this.logs = new RunLogStore(this.#runsDir, this.#deleted);
    this.#writer = writer;
    this.journal = this.#journal = new RunJournal(this.#runsDir, appender, options);
    void this.#writeNewRuns();
  }

  /**
   * Makes this state of the run durable; resolves once it (or a newer one) is. A run the journal
   * still holds (no run.json yet, none being written) that is not finished goes on in the journal:
   * one more line, sharing the synced write (a burst of runs reaching their approvals costs no
   * run.json writes until it ends). Else runs/<id>/run.json is written atomically, creating the
   * folder as needed; saves of one run coalesce: the run is serialised when its write starts, and
   * only the latest state is written. A finished run always gets its run.json (the engine then
   * keeps it slim and reads it from there). An id that is not a run id rejects with
   * ValidationError and touches nothing. A save for a deleted run resolves without writing.
   */
  save(run: Run): Promise<void> {
    const id: unknown = isRecord(run) ? run.id : undefined;
    if (!isId(id, 'run')) return Promise.reject(new ValidationError(`Cannot save a run with the id ${quote(id)}: it is not a run id.`));
    if (this.#deleted.has(id)) return Promise.resolve();
    if (!isFinished(run.status) && this.#journal.holds(id) && !this.#saves.has(id)) return this.#journal.update(run);
    return this.#saveFile(id, run);
  }

  /** Writes run.json (the rest of `save`). */
  #saveFile(id: string, run: Run): Promise<void> {
    // A save of this run still waiting for its turn takes this state instead: one write for both.
    const waiting = this.#waitingSaves.get(id);
    if (waiting) {
      waiting.run = run;
      return waiting.saved;
    }
    const entry = { run, saved: Promise.resolve() };
    this.#waitingSaves.set(id, entry);
    entry.saved = this.#saves.track(id, this.#saveTurns.run(() => {
      this.#waitingSaves.delete(id);
      return this.#write(id, entry.run);
    }));
    return entry.saved;
  }

  /** Writes the run.json of run `id` (its folder first); a deleted run is not written. */
  async #write(id: string, run: Run): Promise<void> {
    const path = this.#runFile(id);
    const write = () => this.#writer.write(path, () => JSON.stringify(run) + '\n', { mode: 0o600 });
    if (this.#deleted.has(id)) return; // deleted while this save waited for its turn
    await this.#ensureFolder(id);
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
    this.#journal.written(id);
  }

  /** Writes the run.json of each new run as the journal says it is due, one at a time, until `close`. */
  async #writeNewRuns(): Promise<void> {
    for await (const run of this.#journal.due()) {
      await this.#saveFile(run.id, run).catch((error) => this.#journal.unwritable(run.id, error));
    }
  }

  /**
   * Every run on disk, oldest first (by id). A run.json that is missing, unreadable, does not parse
   * or is not a run is left out, never deleted, and described in `problems` (one message naming
   * the file each). Entries of runs/ that are not run folders are ignored. Temp files that a crash
   * left in run folders are removed by a sweep that starts when the runs are read and goes on in
   * the background (it never touches a live write's temp file); `flush` waits for it.
   * Each run read from its run.json goes through `keep` as soon as it is read, and only what
   * `keep` returns is held (the engine keeps finished runs slim: 10,000 whole runs at once would
   * grow the heap for good); runs recovered from the journal are returned whole.
   */
  async loadAll(keep: (run: Run) => Run = (run) => run): Promise<{ runs: Run[]; problems: string[] }> {
    let entries;
    try {
      entries = await readdir(this.#runsDir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { runs: [], problems: [] };
      throw error;
    }
    const journals = await this.#journal.read();
    for (const id of journals.deleted) this.#deleted.add(id);
    const ids = entries
      .filter((entry) => entry.isDirectory() && isId(entry.name, 'run') && !this.#deleted.has(entry.name))
      .map((entry) => entry.name)
      .sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
    // A deletion recorded in the journal whose folder a crash left behind is finished now.
    await Promise.all([...journals.deleted].map((id) => rm(join(this.#runsDir, id), { recursive: true, force: true }).catch(() => undefined)));
    const loaded = await this.#loadFolders(ids, keep);
    this.#sweepTempFiles(ids);
    // Runs whose creation reached the journal but whose run.json did not are written in the background.
    return this.#journal.recover(journals, loaded, runProblem);
  }

  /** The runs of these folders, each as `keep` makes it, or the problem that kept it out. */
  async #loadFolders(ids: readonly string[], keep: (run: Run) => Run): Promise<LoadedRuns> {
    const outcomes: (Run | string)[] = new Array(ids.length);
    await forEachBounded(ids, loadConcurrency, async (id, index) => {
      const outcome = await this.#load(id);
      outcomes[index] = typeof outcome === 'string' ? outcome : keep(outcome);
    });
    const loaded: LoadedRuns = { runs: new Map(), problems: new Map() };
    ids.forEach((id, index) => {
      const outcome = outcomes[index]!;
      if (typeof outcome === 'string') loaded.problems.set(id, outcome);
      else loaded.runs.set(id, outcome);
    });
    return loaded;
  }

  /**
   * Starts the background sweep of temp files in these run folders. Listing every folder would
   * double the start-up time, and nothing waits for it. (A method of its own, so that its closure
   * holds the ids only, never the runs read beside them.)
   */
  #sweepTempFiles(ids: readonly string[]): void {
    this.#sweep = this.#sweep.then(() =>
      forEachBounded(ids, sweepConcurrency, (id) => removeStaleTempFiles(join(this.#runsDir, id)).then(() => undefined, () => undefined)),
    );
  }

  /**
   * The full run from disk, or undefined when there is none (a deleted run, or an id that is not a
   * run id and so names nothing). Saves of the run already under way land first, so what was
   * saved before this call is what it reads. A run.json that does not parse or is not this run
   * throws CorruptFileError naming the file.
   */
  async read(id: string): Promise<Run | undefined> {
    if (!isId(id, 'run') || this.#deleted.has(id)) return undefined;
    await this.#saves.settled(id);
    if (this.#deleted.has(id)) return undefined;
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
    await this.#journal.recordDeletion(id, async () => {
      await Promise.all([this.#saves.settled(id), this.logs.settled(id)]);
      this.#folders.delete(id);
      await this.#saves.track(id, rm(join(this.#runsDir, id), { recursive: true, force: true }));
    });
  }

  /**
   * Resolves once every save and append made so far, every new run's run.json, the temp file
   * sweep and the removal of retired journals have settled (never rejects).
   */
  async flush(): Promise<void> {
    await this.#journal.flush();
    await Promise.all([this.#saves.settledAll(), this.logs.settledAll(), this.#sweep]);
  }

  /**
   * Stops for good: waits for the saves, appends and deletions under way, but not for the run.json
   * files of new runs still to be written: their journals stay, and the next start writes them.
   * (A burst of thousands of webhooks would otherwise hold up quitting for as long.)
   */
  async close(): Promise<void> {
    this.#journal.close();
    await Promise.all([this.#saves.settledAll(), this.logs.settledAll()]);
  }

  #runFile(id: string): string {
    return join(this.#runsDir, id, 'run.json');
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
  if (!isRecord(value)) return 'not a JSON object';
  if (value.id !== id) return `its id ${quote(value.id)} is not its folder's name`;
  for (const key of ['pipelineId', 'pipelineName', 'projectId'] as const) {
    if (typeof value[key] !== 'string') return `${key} is ${quote(value[key])}, not text`;
  }
  if (!runStatuses.has(value.status as RunStatus)) return `status is ${quote(value.status)}`;
  if (!Number.isFinite(value.createdAt)) return `createdAt is ${quote(value.createdAt)}, not a time`;
  if (!isRecord(value.variables)) return 'variables is not an object';
  if (!Array.isArray(value.steps) || !value.steps.every((step) => isRecord(step) && typeof step.id === 'string')) {
    return 'steps is not a list of steps';
  }
  return undefined;
}
