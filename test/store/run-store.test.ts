import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogLine, Pipeline, Run, Step } from '../../src/core/api';
import { ValidationError } from '../../src/core/errors';
import { newRunId } from '../../src/core/ids';
import type { AtomicFileSystem } from '../../src/store/atomic';
import { CorruptFileError } from '../../src/store/json-file';
import { JsonlAppender } from '../../src/store/jsonl';
import type { JournalClock } from '../../src/store/run-journal';
import { RunStore, type RunStoreOptions } from '../../src/store/run-store';
import { FileWriter } from '../../src/store/writer';
import { rejects } from '../helpers/assert';
import { withTimeout } from '../helpers/net';
import { waitFor } from '../helpers/temp';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const runStore = suite('run-store');

let root = '';
let dataDir = '';
let appender: JsonlAppender;
runStore.before.each(async () => {
  root = makeTempDir('factory-run-store');
  dataDir = join(root, 'data');
  await fs.mkdir(dataDir);
  appender = new JsonlAppender();
});
runStore.after.each(async () => {
  await appender.close();
  removeTempDir(root);
});

function makeStore(options: { writer?: FileWriter; appender?: JsonlAppender } & RunStoreOptions = {}): RunStore {
  const { writer, appender: ownAppender, ...storeOptions } = options;
  return new RunStore(dataDir, writer ?? new FileWriter(), ownAppender ?? appender, storeOptions);
}

function makeRun(id = newRunId(), overrides: Partial<Run> = {}): Run {
  return {
    id,
    pipelineId: 'pl_0123456789abcdef',
    pipelineName: 'Build',
    projectId: 'prj_0123456789abcdef',
    variables: { branch: 'main' },
    status: 'running',
    createdAt: 1_700_000_000_000,
    steps: [{ id: 'build', name: 'Build', kind: 'shell', status: 'running', attempt: 1 }],
    ...overrides,
  };
}

/** Writes log lines as the engine does: one writer per step attempt, each ended (run-logs.ts). */
async function appendLogs(store: RunStore, lines: readonly LogLine[]): Promise<void> {
  const writers = new Map<string, ReturnType<RunStore['logs']['logWriter']>>();
  for (const { runId, stepId, attempt, line: text, ts, stream } of lines) {
    const key = `${runId} ${stepId} ${attempt}`;
    let writer = writers.get(key);
    if (!writer) writers.set(key, (writer = store.logs.logWriter(runId, stepId, attempt)));
    writer.line(text, stream ?? 'out', ts);
  }
  await Promise.all([...writers.values()].map((writer) => writer.end()));
}

function runFolder(id: string): string {
  return join(dataDir, 'runs', id);
}

async function exists(path: string): Promise<boolean> {
  return fs.access(path).then(() => true, () => false);
}

/** A latch that a test opens by hand. */
function gate(): { wait: Promise<void>; open(): void } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/**
 * Resolves once this process has nothing left to do but wait for the test: no file system request
 * and no immediate pending (process.getActiveResourcesInfo), two event loop turns in a row (so the
 * promise chains of the first have run). Timers do not count: the journal's clock is the test's.
 * A test asserts that something has NOT happened after this, instead of after a sleep.
 */
async function settled(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let quietTurns = 0; quietTurns < 2; ) {
    await new Promise((resolve) => setImmediate(resolve));
    const busy = process.getActiveResourcesInfo().filter((name) => /Req|Immediate/.test(name));
    quietTurns = busy.length === 0 ? quietTurns + 1 : 0;
    if (Date.now() > deadline) throw new Error(`The process stayed busy for 10 s: ${busy.join(', ')}`);
  }
}

/** A clock for the journal that moves only when the test calls `advance`. */
function manualClock(): JournalClock & { advance(ms: number): void } {
  let time = 0;
  const timers = new Set<{ at: number; wake: () => void }>();
  return {
    now: () => time,
    after(ms, wake) {
      const timer = { at: time + ms, wake };
      timers.add(timer);
      return () => {
        timers.delete(timer);
      };
    },
    advance(ms) {
      time += ms;
      for (const timer of [...timers]) {
        if (timer.at > time) continue;
        timers.delete(timer);
        timer.wake();
      }
    },
  };
}

/** Every line of one attempt's log. */
async function readAll(store: RunStore, runId: string, stepId: string, attempt: number): Promise<LogLine[]> {
  return (await store.logs.readLog(runId, stepId, attempt, { limit: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER })).lines;
}

function line(runId: string, stepId: string, attempt: number, text: string, ts = 1): LogLine {
  return { runId, stepId, attempt, line: text, ts, stream: 'out' };
}

// ───────────── runs ─────────────

runStore('a saved run reads back whole, outputs and pipeline snapshot included', async () => {
  const store = makeStore();
  const run = makeRun(undefined, {
    steps: [{ id: 'plan', name: 'Plan', kind: 'agent', status: 'succeeded', attempt: 2, output: 'done ✓', prompt: 'Plan {{issue.title}}' }],
    pipeline: { id: 'pl_0123456789abcdef', projectId: 'prj_0123456789abcdef', name: 'Build', variables: {}, steps: [], createdAt: 1, updatedAt: 2 },
    issue: { title: 'Fix the login', key: 'ENG-1' },
  });
  await store.save(run);
  assert.equal(await store.read(run.id), run);
  assert.equal(await makeStore().read(run.id), run, 'a new store reads it from disk');
});

runStore('many saves of one run leave the last state on disk, in fewer writes than saves', async () => {
  let renames = 0;
  const countingFs: AtomicFileSystem = {
    open: (path, flags, mode) => fs.open(path, flags, mode),
    unlink: (path) => fs.unlink(path),
    stat: (path) => fs.stat(path),
    async rename(oldPath, newPath) {
      renames += 1;
      await fs.rename(oldPath, newPath);
    },
  };
  const store = makeStore({ writer: new FileWriter({ fs: countingFs }) });
  const id = newRunId();
  const saves: Promise<void>[] = [];
  for (let index = 0; index < 50; index += 1) {
    saves.push(store.save(makeRun(id, { variables: { index: String(index) } })));
    if (index % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(saves);
  const onDisk = JSON.parse(await fs.readFile(join(runFolder(id), 'run.json'), 'utf8')) as Run;
  assert.is(onDisk.variables.index, '49');
  assert.ok(renames < 50, `expected coalesced writes, got ${renames} for 50 saves`);
});

runStore('run.json writes take turns, two at a time, and the saves of a run waiting for its turn become one write of its latest state', async () => {
  let writing = 0;
  let most = 0;
  const renamed: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const gatedFs: AtomicFileSystem = {
    async open(path, flags, mode) {
      if (flags === 'wx') most = Math.max(most, ++writing);
      return fs.open(path, flags, mode);
    },
    unlink: (path) => fs.unlink(path),
    stat: (path) => fs.stat(path),
    async rename(oldPath, newPath) {
      await gate;
      writing -= 1;
      renamed.push(newPath);
      await fs.rename(oldPath, newPath);
    },
  };
  const store = makeStore({ writer: new FileWriter({ fs: gatedFs }) });
  const ids = Array.from({ length: 8 }, () => newRunId());
  const saves = ids.map((id) => store.save(makeRun(id)));
  await waitFor(() => writing === 2); // two writes under way, held before their rename
  const last = ids.at(-1)!;
  for (const index of ['1', '2', '3']) saves.push(store.save(makeRun(last, { variables: { index } })));
  release();
  await Promise.all(saves);
  assert.is(most, 2, 'at most two run.json writes at once');
  assert.is(renamed.filter((path) => path.includes(last)).length, 1, 'four saves of a run waiting for their turn: one write');
  const onDisk = JSON.parse(await fs.readFile(join(runFolder(last), 'run.json'), 'utf8')) as Run;
  assert.is(onDisk.variables.index, '3');
  assert.is(renamed.length, 8);
});

runStore('loadAll returns every run oldest first, whatever order they were saved in', async () => {
  const store = makeStore();
  const ids = [5, 1, 4, 2, 3].map((minute) => newRunId(1_700_000_000_000 + minute * 60_000));
  await Promise.all(ids.map((id) => store.save(makeRun(id))));
  const { runs, problems } = await makeStore().loadAll();
  assert.equal(runs.map((run) => run.id), [...ids].sort());
  assert.equal(problems, []);
});

runStore('loadAll hands back each run on disk as `keep` makes it, and a run recovered from the journal whole', async () => {
  const store = makeStore();
  const finished = makeRun(newRunId(1_700_000_000_000), { status: 'succeeded', pipeline: { id: 'pl_0123456789abcdef', projectId: 'prj_0123456789abcdef', name: 'Build', variables: {}, steps: [], createdAt: 1, updatedAt: 1 } });
  const running = makeRun(newRunId(1_700_000_060_000));
  await Promise.all([store.save(finished), store.save(running)]);
  const journaled = makeRun(newRunId(1_700_000_120_000), { status: 'queued' });
  await store.journal.add(journaled);
  await store.close(); // its run.json is left for the next start
  await fs.rm(runFolder(journaled.id), { recursive: true, force: true });
  const kept: string[] = [];
  const reopened = makeStore();
  const { runs } = await reopened.loadAll((run) => {
    kept.push(run.id);
    if (run.status !== 'succeeded') return run;
    const { pipeline: _pipeline, ...slim } = run;
    return slim;
  });
  assert.equal(kept.sort(), [finished.id, running.id]);
  assert.equal(runs.map((run) => run.id), [finished.id, running.id, journaled.id]);
  assert.is(runs[0]!.pipeline, undefined, 'what keep returned is what loadAll returns');
  assert.equal(runs[1], running);
  assert.equal(runs[2], journaled);
  await reopened.flush(); // it writes the journaled run's run.json again
});

runStore('loadAll of an empty data folder finds no runs', async () => {
  assert.equal(await makeStore().loadAll(), { runs: [], problems: [] });
});

runStore('loadAll skips a corrupt run.json or one that is not a run, names the file, and keeps it', async () => {
  const store = makeStore();
  const good = newRunId();
  const broken = newRunId();
  const notRun = newRunId();
  const stranger = newRunId();
  await Promise.all([good, broken, notRun, stranger].map((id) => store.save(makeRun(id))));
  await fs.writeFile(join(runFolder(broken), 'run.json'), '{"id": "run_');
  await fs.writeFile(join(runFolder(notRun), 'run.json'), '[1, 2, 3]');
  // A copied folder: the run inside is not the one its folder names.
  await fs.writeFile(join(runFolder(stranger), 'run.json'), JSON.stringify(makeRun(good)));
  const { runs, problems } = await makeStore().loadAll();
  assert.equal(runs.map((run) => run.id), [good]);
  assert.is(problems.length, 3);
  for (const id of [broken, notRun, stranger]) {
    const path = join(runFolder(id), 'run.json');
    assert.ok(problems.some((problem) => problem.includes(path)), `a problem names ${path}`);
    assert.ok(await exists(path), `${path} is kept`);
  }
  await rejects(makeStore().read(broken), /run\.json.*Fix or remove the file/);
});

runStore('loadAll removes temp files that a crash left in run folders', async () => {
  const store = makeStore();
  const id = newRunId();
  await store.save(makeRun(id));
  // pid 2^22 + 1 is above Linux's pid limit: that process cannot be running.
  const stale = join(runFolder(id), `.run.json.${4_194_305}.0badcafe.tmp`);
  await fs.writeFile(stale, '{"half');
  const fresh = makeStore();
  const { runs } = await fresh.loadAll();
  assert.is(runs.length, 1);
  await fresh.flush();
  assert.not.ok(await exists(stale));
  assert.ok(await exists(join(runFolder(id), 'run.json')));
});

runStore('read of a run that is not there is undefined', async () => {
  const store = makeStore();
  assert.is(await store.read(newRunId()), undefined);
  assert.is(await store.read('../config'), undefined);
});

runStore('ids that are not run ids are refused without touching the disk', async () => {
  const store = makeStore();
  await fs.mkdir(join(root, 'x'));
  await fs.writeFile(join(root, 'x', 'keep.txt'), 'keep');
  for (const id of ['../x', 'run_../../etc', 'run_', '', 'RUN_0123456789abcdef', 'run_0123456789abcdef/..']) {
    const saveError = await rejects(store.save(makeRun(id)), /is not a run id/);
    assert.instance(saveError, ValidationError);
    assert.ok(saveError.message.includes(id === '' ? 'an empty text' : '`' + id + '`'), `the message quotes ${id}`);
    await rejects(store.delete(id), /is not a run id/);
    await rejects(appendLogs(store, [line(id, 'build', 1, 'x')]), /is not a run id/);
    await rejects(readAll(store, id, 'build', 1), /is not a run id/);
  }
  await rejects(store.save(null as unknown as Run), /is not a run id/);
  assert.equal(await fs.readdir(dataDir), [], 'nothing was created in the data folder');
  assert.is(await fs.readFile(join(root, 'x', 'keep.txt'), 'utf8'), 'keep');
});

runStore('step ids and attempts that could escape the logs folder are refused', async () => {
  const store = makeStore();
  const id = newRunId();
  for (const stepId of ['../run', 'Build', '_setup', 'a/b', '1st', 'a'.repeat(41)]) {
    await rejects(appendLogs(store, [line(id, stepId, 1, 'x')]), /is not a step id/);
    await rejects(readAll(store, id, stepId, 1), /is not a step id/);
  }
  for (const attempt of [-1, 1.5, Number.NaN, '1' as unknown as number, Infinity]) {
    await rejects(appendLogs(store, [line(id, 'build', attempt, 'x')]), /whole number from 0/);
    await rejects(readAll(store, id, 'build', attempt), /whole number from 0/);
  }
  assert.equal(await fs.readdir(dataDir), []);
});

// ───────────── delete ─────────────

runStore('delete removes the run folder with its logs, and the run is gone from loadAll', async () => {
  const store = makeStore();
  const keep = newRunId();
  const gone = newRunId();
  await Promise.all([store.save(makeRun(keep)), store.save(makeRun(gone))]);
  await appendLogs(store, [line(gone, 'build', 1, 'hello'), line(gone, '', 0, 'setup')]);
  await store.delete(gone);
  assert.not.ok(await exists(runFolder(gone)));
  assert.is(await store.read(gone), undefined);
  assert.equal(await readAll(store, gone, 'build', 1), []);
  assert.equal((await makeStore().loadAll()).runs.map((run) => run.id), [keep]);
});

runStore('saves and appends that arrive after delete do not bring the folder back', async () => {
  const store = makeStore();
  const id = newRunId();
  const firstSave = store.save(makeRun(id));
  const firstAppend = appendLogs(store, [line(id, 'build', 1, 'early')]);
  const deleting = store.delete(id);
  const lateSave = store.save(makeRun(id, { status: 'failed' }));
  const lateAppend = appendLogs(store, [line(id, 'build', 1, 'late'), line(id, '', 0, 'late setup')]);
  await Promise.all([firstSave, firstAppend, deleting, lateSave, lateAppend]);
  await store.save(makeRun(id, { status: 'cancelled' }));
  await appendLogs(store, [line(id, 'build', 2, 'after delete')]);
  await store.flush();
  await appender.flush();
  assert.not.ok(await exists(runFolder(id)));
  assert.equal((await fs.readdir(join(dataDir, 'runs'))).filter((name) => !name.startsWith('journal-')), [], 'only the journal, holding the deletion');
});

runStore('delete waits for a save that is still being written', async () => {
  const files = holdingFs();
  const store = makeStore({ writer: new FileWriter({ fs: files.fs }) });
  const id = newRunId();
  const renameWaits = files.hold();
  const saving = store.save(makeRun(id));
  await renameWaits;
  let deleted = false;
  const deleting = store.delete(id).then(() => (deleted = true));
  await settled();
  const journal = await fs.readFile(join(dataDir, 'runs', 'journal-1.jsonl'), 'utf8');
  assert.ok(journal.includes(`"deleted":"${id}"`), 'delete got as far as recording the deletion');
  assert.not.ok(deleted, 'delete waits while the save is under way');
  assert.ok(await exists(runFolder(id)), 'the folder is still there');
  files.release();
  await Promise.all([saving, deleting]);
  assert.not.ok(await exists(runFolder(id)));
});

runStore('delete waits for log writes under way: the folder does not come back after it', async () => {
  const store = makeStore();
  const id = newRunId();
  await store.save(makeRun(id));
  const writer = store.logs.logWriter(id, 'build', 1);
  for (let index = 0; index < 2000; index++) writer.output(Buffer.from(`line ${index}\n`.repeat(50)), 'out');
  const ending = writer.end();
  const deleting = store.delete(id);
  await Promise.all([ending, deleting]);
  writer.line('a straggler', 'info');
  await writer.end();
  assert.not.ok(await exists(runFolder(id)));
});

// ───────────── logs ─────────────

runStore('each attempt of a step has its own log files, and the setup log is _setup.0', async () => {
  const store = makeStore();
  const id = newRunId();
  await appendLogs(store, [
    line(id, '', 0, 'cloning'),
    line(id, 'build', 1, 'first try'),
    line(id, 'build', 2, 'second try'),
    line(id, 'build', 1, 'first try, again'),
  ]);
  assert.equal((await fs.readdir(join(runFolder(id), 'logs'))).sort(), ['_setup.0.idx', '_setup.0.log', 'build.1.idx', 'build.1.log', 'build.2.idx', 'build.2.log']);
  assert.equal((await readAll(store, id, 'build', 1)).map((entry) => entry.line), ['first try', 'first try, again']);
  assert.equal((await readAll(store, id, 'build', 2)).map((entry) => entry.line), ['second try']);
  assert.equal(await readAll(store, id, '', 0), [{ runId: id, stepId: '', attempt: 0, n: 1, line: 'cloning', ts: 1, stream: 'out' }]);
});

runStore('a log keeps the text as it came, and an index of its blocks with time and stream', async () => {
  const store = makeStore();
  const id = newRunId();
  await appendLogs(store, [
    { runId: id, stepId: 'test', attempt: 1, line: 'ok', ts: 1_700_000_000_123, stream: 'err' },
    { runId: id, stepId: 'test', attempt: 1, line: 'bare', ts: 1_700_000_000_456 },
  ]);
  assert.is(await fs.readFile(join(runFolder(id), 'logs', 'test.1.log'), 'utf8'), 'ok\nbare\n');
  assert.is((await fs.readFile(join(runFolder(id), 'logs', 'test.1.idx'))).length, 64, 'two blocks of 32 bytes');
  assert.equal(await readAll(store, id, 'test', 1), [
    { runId: id, stepId: 'test', attempt: 1, n: 1, line: 'ok', ts: 1_700_000_000_123, stream: 'err' },
    { runId: id, stepId: 'test', attempt: 1, n: 2, line: 'bare', ts: 1_700_000_000_456, stream: 'out' },
  ]);
});

runStore('reading a log that does not exist gives no lines', async () => {
  const store = makeStore();
  assert.equal(await readAll(store, newRunId(), 'build', 3), []);
});

runStore('a log of an earlier version (JSON Lines) still reads, a torn last line left out', async () => {
  const store = makeStore();
  const id = newRunId();
  await fs.mkdir(join(runFolder(id), 'logs'), { recursive: true });
  const path = join(runFolder(id), 'logs', 'build.1.jsonl');
  await fs.writeFile(path, '{"ts":1,"stream":"err","line":"one"}\n{"ts":2,"line":"two"}\n{"ts":3,"li');
  assert.equal(await readAll(store, id, 'build', 1), [
    { runId: id, stepId: 'build', attempt: 1, n: 1, line: 'one', ts: 1, stream: 'err' },
    { runId: id, stepId: 'build', attempt: 1, n: 2, line: 'two', ts: 2, stream: 'out' },
  ]);
  assert.equal((await store.logs.readLog(id, 'build', 1, { limit: 1, maxBytes: 1000 })).lines.map((entry) => entry.line), ['two']);
  assert.equal(await store.logs.logDownload(id, 'build', 1), { lines: ['one', 'two'] });
});

runStore('unicode, newlines and control characters in log lines round-trip', async () => {
  const store = makeStore();
  const id = newRunId();
  const texts = ['émoji 🚀 ünïcode 日本語', 'two\nlines', 'tab\there', 'sep\u2028arator', '\u001b[31mred\u001b[0m', '', '{"not":"a record"}', 'bell\u0007 and NUL\u0000 gone'];
  await appendLogs(store, texts.map((text) => line(id, 'build', 1, text)));
  const shown = texts.map((text) => text.replace('\n', ' ').replace(/[\u0007\u0000]/g, ''));
  assert.equal((await readAll(makeStore(), id, 'build', 1)).map((entry) => entry.line), shown);
});

runStore('readLog sees lines whose append was not awaited yet', async () => {
  const store = makeStore();
  const id = newRunId();
  void appendLogs(store, [line(id, 'build', 1, 'in flight')]);
  assert.equal((await readAll(store, id, 'build', 1)).map((entry) => entry.line), ['in flight']);
});

runStore('flush waits for saves and appends that were not awaited', async () => {
  const store = makeStore();
  const id = newRunId();
  void store.save(makeRun(id, { status: 'succeeded' }));
  void appendLogs(store, [line(id, 'build', 1, 'last words')]);
  await store.flush();
  const onDisk = JSON.parse(await fs.readFile(join(runFolder(id), 'run.json'), 'utf8')) as Run;
  assert.is(onDisk.status, 'succeeded');
  assert.match(await fs.readFile(join(runFolder(id), 'logs', 'build.1.log'), 'utf8'), /last words/);
});

runStore('read waits for the saves under way, so it never returns an older state than was saved', async () => {
  const files = holdingFs();
  const store = makeStore({ writer: new FileWriter({ fs: files.fs }) });
  const id = newRunId();
  await store.save(makeRun(id, { status: 'running' }));
  const renameWaits = files.hold();
  const saving = store.save(makeRun(id, { status: 'failed' }));
  await renameWaits;
  let read: Run | undefined;
  const reading = store.read(id).then((run) => (read = run));
  await settled();
  assert.is(read, undefined, 'read is still waiting for the save');
  files.release();
  await Promise.all([saving, reading]);
  assert.is(read!.status, 'failed');
});

runStore('a corrupt run.json read directly throws CorruptFileError', async () => {
  const store = makeStore();
  const id = newRunId();
  await store.save(makeRun(id));
  await fs.writeFile(join(runFolder(id), 'run.json'), JSON.stringify({ ...makeRun(id), status: 'bogus' }));
  const error = await rejects(store.read(id), /not a run \(status is `bogus`\)/);
  assert.instance(error, CorruptFileError);
});

runStore('create makes a run durable through the journal; a run whose run.json never landed comes back from it', async () => {
  const store = makeStore();
  const run = makeRun();
  await store.journal.add(run);
  await store.flush();
  // A crash right after the journal write: the run.json is not there yet.
  await fs.rm(join(dataDir, 'runs', run.id), { recursive: true, force: true });
  const reopened = makeStore();
  const { runs, problems } = await reopened.loadAll();
  assert.equal(runs.map((candidate) => candidate.id), [run.id]);
  assert.equal(runs[0], run);
  assert.equal(problems, []);
  await reopened.flush();
  assert.equal(await reopened.read(run.id), run, 'its run.json is written again');
  const leftovers = (await fs.readdir(join(dataDir, 'runs'))).filter((name) => name.startsWith('journal-'));
  assert.equal(leftovers, [], 'the old journal is gone once its runs are on disk');
});

runStore('a run folder without its run.json is no problem when the journal holds the run; other broken folders still are', async () => {
  const store = makeStore();
  const run = makeRun();
  await store.journal.add(run);
  await store.flush();
  // A crash after the folder was made and before run.json landed; and a folder nobody journaled.
  await fs.rm(join(dataDir, 'runs', run.id, 'run.json'));
  const stray = newRunId();
  await fs.mkdir(join(dataDir, 'runs', stray));
  const reopened = makeStore();
  const { runs, problems } = await reopened.loadAll();
  assert.equal(runs.map((candidate) => candidate.id), [run.id]);
  assert.is(problems.length, 1);
  assert.match(problems[0]!, new RegExp(`${stray}.*has no run\\.json`));
  await reopened.flush(); // it writes the run.json again: not while the folder is being removed
});

runStore('a deleted run does not come back from the journal, even if its folder survived a crash', async () => {
  const store = makeStore();
  const kept = makeRun();
  const deleted = makeRun();
  await store.journal.add(kept);
  await store.journal.add(deleted);
  await store.flush();
  const copy = join(root, 'copy');
  await fs.cp(join(dataDir, 'runs', deleted.id), copy, { recursive: true });
  await store.delete(deleted.id);
  await fs.cp(copy, join(dataDir, 'runs', deleted.id), { recursive: true }); // the folder a crash left behind
  const { runs } = await makeStore().loadAll();
  assert.equal(runs.map((candidate) => candidate.id), [kept.id]);
  assert.not.ok(await fs.stat(join(dataDir, 'runs', deleted.id)).then(() => true, () => false), 'the deletion is finished');
});

runStore('many runs created at once share journal writes (group commit) and all become durable', async () => {
  const store = makeStore();
  const runs = Array.from({ length: 200 }, () => makeRun());
  await Promise.all(runs.map((run) => store.journal.add(run)));
  await store.flush();
  const { runs: loaded } = await makeStore().loadAll();
  assert.equal(loaded.map((run) => run.id), runs.map((run) => run.id).sort());
});

/**
 * A file system for FileWriter whose renames (the step that makes a run.json appear) wait from
 * `hold` to `release`; `hold` resolves once a rename waits.
 */
function holdingFs(): { fs: AtomicFileSystem; hold(): Promise<void>; release(): void; inFlight: () => number; maxInFlight: () => number } {
  let held: { wait: Promise<void>; open(): void } | undefined;
  let renameWaits: { wait: Promise<void>; open(): void } | undefined;
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    fs: {
      async open(path, flags, mode) {
        if (flags === 'wx') maxInFlight = Math.max(maxInFlight, ++inFlight);
        return fs.open(path, flags, mode);
      },
      unlink: (path) => fs.unlink(path),
      stat: (path) => fs.stat(path),
      async rename(oldPath, newPath) {
        if (held) {
          renameWaits?.open();
          await held.wait;
        }
        await fs.rename(oldPath, newPath);
        inFlight -= 1;
      },
    },
    hold: () => {
      held = gate();
      renameWaits = gate();
      return renameWaits.wait;
    },
    release: () => {
      held?.open();
      held = undefined;
    },
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
  };
}

async function journals(): Promise<string[]> {
  return (await fs.readdir(join(dataDir, 'runs'))).filter((name) => name.startsWith('journal-')).sort();
}

runStore('create resolves once the journal holds the run, before its run.json; a crash then still keeps the run', async () => {
  const files = holdingFs();
  files.hold();
  const store = makeStore({ writer: new FileWriter({ fs: files.fs }) });
  const run = makeRun();
  await withTimeout(store.journal.add(run), 'create while run.json writes are held', 2000);
  assert.not.ok(await exists(join(runFolder(run.id), 'run.json')), 'run.json is still being written');
  const reopened = makeStore();
  const { runs } = await reopened.loadAll(); // what a start after a crash right now would see
  assert.equal(runs, [run]);
  files.release();
  await store.flush();
  await reopened.flush(); // it writes the run.json too: not while the folder is being removed
});

runStore('runs sharing a frozen pipeline snapshot come back whole from the journal, each state as it was', async () => {
  // Frozen throughout, as the engine's snapshots are.
  const step: Step = Object.freeze({ id: 'build', name: 'Build', kind: 'shell', command: 'make "x"\n' });
  const snapshot: Pipeline = Object.freeze({
    id: 'pl_0123456789abcdef', projectId: 'prj_0123456789abcdef', name: 'Build', variables: Object.freeze({ branch: 'main' }),
    steps: Object.freeze([step]) as Step[], createdAt: 1, updatedAt: 2,
  });
  const store = makeStore({ quietBeforeWritingMs: 60_000, clock: manualClock() });
  const first = makeRun(newRunId(), { status: 'queued', pipeline: snapshot });
  const second = makeRun(newRunId(), { status: 'queued', pipeline: snapshot });
  await Promise.all([store.journal.add(first), store.journal.add(second)]);
  await store.save({ ...second, status: 'waiting' });
  const { runs } = await makeStore({ quietBeforeWritingMs: 60_000, clock: manualClock() }).loadAll();
  assert.equal(runs, [first, { ...second, status: 'waiting' }]);
  await store.flush();
});

runStore('a run the journal still holds saves its new states there until its run.json is due, and a crash keeps the newest', async () => {
  const store = makeStore({ quietBeforeWritingMs: 60_000, clock: manualClock() });
  const run = makeRun(newRunId(), { status: 'queued' });
  await store.journal.add(run);
  await store.save({ ...run, status: 'running' });
  await store.save({ ...run, status: 'waiting' });
  assert.not.ok(await exists(join(runFolder(run.id), 'run.json')), 'no run.json while new runs keep coming: the states are journal lines');
  const reopened = makeStore({ quietBeforeWritingMs: 60_000, clock: manualClock() });
  const { runs } = await reopened.loadAll(); // what a start after a crash right now would see
  assert.equal(runs.map((loaded) => loaded.status), ['waiting'], 'the latest line of the run wins');
  await store.flush();
  assert.is((await store.read(run.id))?.status, 'waiting', 'its run.json, once due, has the latest state');
  await reopened.flush();
});

runStore('a finished run gets its run.json at once, even while the journal holds it', async () => {
  const store = makeStore({ quietBeforeWritingMs: 60_000, clock: manualClock() });
  const run = makeRun(newRunId(), { status: 'running' });
  await store.journal.add(run);
  await store.save({ ...run, status: 'succeeded', finishedAt: run.createdAt + 1000 });
  assert.is((await store.read(run.id))?.status, 'succeeded', 'the engine reads a finished run from its run.json');
  await store.flush();
});

runStore('a save while the run.json is being written waits for that write, then writes its own state', async () => {
  const files = holdingFs();
  const clock = manualClock();
  const store = makeStore({ writer: new FileWriter({ fs: files.fs }), quietBeforeWritingMs: 1000, clock });
  const run = makeRun(newRunId(), { status: 'queued' });
  await store.journal.add(run);
  const renaming = files.hold();
  clock.advance(1000); // the pause: the run's run.json is due, and its write waits at the rename
  await renaming;
  const saved = store.save({ ...run, status: 'waiting' });
  files.release();
  await saved;
  await store.flush();
  assert.is((await store.read(run.id))?.status, 'waiting', 'not the state the earlier write took');
  const { runs } = await makeStore().loadAll();
  assert.equal(runs.map((loaded) => loaded.status), ['waiting']);
});

runStore('new runs get their run.json from one writer at a time, oldest first', async () => {
  const files = holdingFs();
  const store = makeStore({ writer: new FileWriter({ fs: files.fs }) });
  const runs = Array.from({ length: 40 }, () => makeRun());
  await Promise.all(runs.map((run) => store.journal.add(run)));
  await store.flush();
  assert.equal(files.maxInFlight(), 1);
  for (const run of runs) assert.equal(await store.read(run.id), run);
});

async function runFilesWritten(): Promise<number> {
  const names = await fs.readdir(join(dataDir, 'runs')).catch(() => [] as string[]);
  const written = await Promise.all(names.filter((name) => name.startsWith('run_')).map((name) => exists(join(runFolder(name), 'run.json'))));
  return written.filter(Boolean).length;
}

runStore('run.json files wait while new runs keep coming, and are written once they pause', async () => {
  const clock = manualClock();
  const store = makeStore({ quietBeforeWritingMs: 1000, clock });
  const runs: Run[] = [];
  for (let index = 0; index < 8; index++) {
    runs.push(makeRun());
    await store.journal.add(runs.at(-1)!);
    await settled();
    clock.advance(999); // the next run comes just before the pause is long enough
  }
  await settled();
  assert.is(await runFilesWritten(), 0, 'nothing is written during the burst (8 s long, no pause of 1 s)');
  clock.advance(1);
  await waitFor(async () => (await runFilesWritten()) === runs.length, 5000, 'the run.json files after the pause');
  for (const run of runs) assert.equal(await store.read(run.id), run);
});

runStore('a large backlog is written even while new runs keep coming', async () => {
  const clock = manualClock();
  const store = makeStore({ quietBeforeWritingMs: 60_000, maxUnwrittenRuns: 3, clock });
  for (let index = 0; index < 12; index++) {
    await store.journal.add(makeRun());
    clock.advance(10);
    await settled();
  }
  // The clock never reached a pause of 60 s: only the runs beyond the limit of 3 were written.
  assert.is(await runFilesWritten(), 10, 'all but the last two run.json files');
  await store.flush();
  assert.is(await runFilesWritten(), 12, 'flush does not wait for a pause');
});

runStore('a full journal is removed only once every run it holds has its run.json', async () => {
  const files = holdingFs();
  const renameWaits = files.hold();
  const store = makeStore({ writer: new FileWriter({ fs: files.fs }), rotateLines: 3, quietBeforeWritingMs: 0 });
  const runs = Array.from({ length: 4 }, () => makeRun());
  for (const run of runs) await store.journal.add(run);
  await renameWaits; // the writer holds the first run's run.json
  await settled();
  assert.equal(await journals(), ['journal-1.jsonl', 'journal-2.jsonl'], 'the full journal stays while run.json files are held');
  files.release();
  await store.flush();
  assert.equal(await journals(), ['journal-2.jsonl'], 'the full journal is gone, the current one stays');
  if (process.platform === 'linux') {
    const open = await Promise.all((await fs.readdir('/proc/self/fd')).map((fd) => fs.readlink(`/proc/self/fd/${fd}`).catch(() => '')));
    assert.not.ok(open.some((target) => target.includes('journal-1.jsonl')), 'no descriptor keeps the removed journal');
  }
  const { runs: loaded } = await makeStore().loadAll();
  assert.equal(loaded, runs);
});

runStore('close does not wait for the run.json files still to be written; the next start has every run and writes them', async () => {
  const files = holdingFs();
  const store = makeStore({ writer: new FileWriter({ fs: files.fs }), quietBeforeWritingMs: 0 });
  const runs = Array.from({ length: 20 }, () => makeRun());
  const renameWaits = files.hold();
  await Promise.all(runs.map((run) => store.journal.add(run)));
  await renameWaits; // the writer is at the first run's run.json
  const closing = store.close();
  files.release();
  await closing;
  const written = (await fs.readdir(join(dataDir, 'runs'))).filter((name) => name.startsWith('run_'));
  assert.is(written.length, 1, `only the write under way finished (${written.length} of ${runs.length})`);
  const reopened = makeStore();
  const { runs: loaded } = await reopened.loadAll();
  assert.equal(loaded, runs.sort((left, right) => (left.id < right.id ? -1 : 1)));
  await reopened.flush();
  for (const run of runs) assert.equal(await reopened.read(run.id), run);
  assert.equal(await journals(), []);
});

/** The real file system, except that making the run.json of run `id()` appear fails (EIO). */
function renameFailsFor(id: () => string): AtomicFileSystem {
  return {
    open: (path, flags, mode) => fs.open(path, flags, mode),
    unlink: (path) => fs.unlink(path),
    stat: (path) => fs.stat(path),
    async rename(oldPath, newPath) {
      if (id() && newPath.includes(id())) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
      await fs.rename(oldPath, newPath);
    },
  };
}

runStore('a run whose run.json cannot be written keeps its journal, and the next start recovers it', async () => {
  let failFor = '';
  const failing = renameFailsFor(() => failFor);
  const store = makeStore({ writer: new FileWriter({ fs: failing }), rotateLines: 2 });
  const [lost, other, later] = [makeRun(), makeRun(), makeRun()];
  failFor = lost.id;
  const errors: unknown[] = [];
  const originalError = console.error;
  console.error = (...parts: unknown[]) => errors.push(parts.join(' '));
  try {
    await store.journal.add(lost);
    await store.journal.add(other);
    await store.journal.add(later);
    await store.flush();
  } finally {
    console.error = originalError;
  }
  assert.match(String(errors[0]), new RegExp(`Writing run ${lost.id} failed: EIO.*recovers it from its journal`));
  assert.equal(await journals(), ['journal-1.jsonl', 'journal-2.jsonl'], 'the journal holding the unwritten run stays');
  const reopened = makeStore();
  const { runs } = await reopened.loadAll();
  assert.equal(runs.map((run) => run.id), [lost.id, other.id, later.id]);
  await reopened.flush();
  assert.equal(await reopened.read(lost.id), lost);
  assert.equal(await journals(), [], 'both journals go once the run is written');
});

runStore('a run whose run.json cannot be written keeps every journal holding its states, so the next start has the newest', async () => {
  let failFor = '';
  const failing = renameFailsFor(() => failFor);
  const store = makeStore({ writer: new FileWriter({ fs: failing }), rotateLines: 2, quietBeforeWritingMs: 60_000, clock: manualClock() });
  const [lost, other, later] = [makeRun(newRunId(), { status: 'queued' }), makeRun(), makeRun()];
  failFor = lost.id;
  const originalError = console.error;
  console.error = () => {};
  try {
    await store.journal.add(lost);
    await store.journal.add(other); // journal 1 is full
    await store.save({ ...lost, status: 'waiting' }); // its newest state, in journal 2
    await store.journal.add(later); // journal 2 is full too, and goes once its runs are written
    await store.flush();
  } finally {
    console.error = originalError;
  }
  const { runs } = await makeStore().loadAll();
  assert.equal(runs.find((run) => run.id === lost.id)?.status, 'waiting', 'not the state its first journal holds');
});

runStore.run();
