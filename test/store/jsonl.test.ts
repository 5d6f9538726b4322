import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidationError } from '../../src/core/errors';
import { CorruptFileError, readJsonFile } from '../../src/store/json-file';
import { JsonlAppender, readJsonLines, readJsonLinesReport, type JsonlFileHandle, type JsonlFileSystem } from '../../src/store/jsonl';

const jsonl = suite('jsonl');

let folder = '';
jsonl.before.each(async () => {
  folder = await fs.mkdtemp(join(tmpdir(), 'factory-jsonl-'));
});
jsonl.after.each(async () => {
  await fs.rm(folder, { recursive: true, force: true });
});

/** The real file system, counting opens, closes, writes and syncs; `failWrite` makes a write throw. */
function countingFileSystem(failWrite: (data: string) => boolean = () => false) {
  const counts = { opens: 0, closes: 0, writes: 0, syncs: 0, open: 0, mostOpen: 0, flags: [] as string[] };
  const fileSystem: JsonlFileSystem = {
    mkdir: (path, options) => fs.mkdir(path, options),
    async open(path, flags, mode) {
      const handle = await fs.open(path, flags, mode);
      counts.flags.push(flags);
      counts.opens += 1;
      counts.open += 1;
      counts.mostOpen = Math.max(counts.mostOpen, counts.open);
      const wrapped: JsonlFileHandle = {
        stat: () => handle.stat(),
        read: (buffer, offset, length, position) => handle.read(buffer, offset, length, position),
        async appendFile(data) {
          counts.writes += 1;
          if (failWrite(data)) {
            // A torn write: part of the data reaches the file, then the disk fails.
            await handle.appendFile(data.slice(0, Math.floor(data.length / 2)));
            throw new Error('disk failed mid-write');
          }
          await handle.appendFile(data);
        },
        async sync() {
          counts.syncs += 1;
          await handle.sync();
        },
        async close() {
          counts.closes += 1;
          counts.open -= 1;
          await handle.close();
        },
      };
      return wrapped;
    },
  };
  return { fileSystem, counts };
}

jsonl('records appended come back in order, one per line', async () => {
  const path = join(folder, 'log.jsonl');
  const appender = new JsonlAppender();
  await appender.append(path, [{ line: 1 }, { line: 2 }]);
  await appender.append(path, [{ line: 3 }, 'text', 42, null, [1, 2]]);
  await appender.close();
  assert.equal(await readJsonLines(path), [{ line: 1 }, { line: 2 }, { line: 3 }, 'text', 42, null, [1, 2]]);
  const text = await fs.readFile(path, 'utf8');
  assert.is(text.split('\n').length, 8, 'seven lines, each ending in a newline');
  assert.ok(text.endsWith('\n'));
});

jsonl('unicode, newlines and line separators inside strings survive the round trip', async () => {
  const path = join(folder, 'log.jsonl');
  const tricky = ['two\nlines', 'carriage\r\nreturn', 'sep\u2028arator\u2029s', 'émoji 🚀 ünïcode 日本語', 'lone \ud800 surrogate', '', '{"not":"json"}'];
  const appender = new JsonlAppender();
  await appender.append(path, tricky.map((text) => ({ text })));
  await appender.close();
  const back = await readJsonLines<{ text: string }>(path);
  assert.equal(back.map((record) => record.text), tricky);
});

jsonl('a missing file reads as no records', async () => {
  assert.equal(await readJsonLines(join(folder, 'nothing.jsonl')), []);
  assert.equal(await readJsonLinesReport(join(folder, 'nothing.jsonl')), { records: [], skipped: 0, tornLastLine: false });
});

jsonl('a torn last line is left out without complaint, even when what remains parses', async () => {
  const path = join(folder, 'log.jsonl');
  await fs.writeFile(path, '{"a":1}\n{"a":2}\n{"a":3');
  assert.equal(await readJsonLinesReport(path), { records: [{ a: 1 }, { a: 2 }], skipped: 0, tornLastLine: true });
  // `12` is what is left of `1234` cut by a crash: without its newline it cannot be trusted.
  await fs.writeFile(path, '{"a":1}\n12');
  assert.equal(await readJsonLinesReport(path), { records: [{ a: 1 }], skipped: 0, tornLastLine: true });
  await fs.writeFile(path, '{"a":1}\n{"a":');
  assert.equal(await readJsonLines(path), [{ a: 1 }]);
});

jsonl('a corrupt line in the middle is skipped and counted', async () => {
  const path = join(folder, 'log.jsonl');
  await fs.writeFile(path, '{"a":1}\n{"a":2,,}\n\n{"a":3}\ngarbage\n{"a":4}\n');
  assert.equal(await readJsonLinesReport(path), { records: [{ a: 1 }, { a: 3 }, { a: 4 }], skipped: 2, tornLastLine: false });
});

jsonl('appending after a torn last line starts a fresh line instead of gluing onto the fragment', async () => {
  const path = join(folder, 'log.jsonl');
  await fs.writeFile(path, '{"a":1}\n{"a":2');
  const appender = new JsonlAppender();
  await appender.append(path, [{ a: 3 }]);
  await appender.append(path, [{ a: 4 }]);
  await appender.close();
  assert.is(await fs.readFile(path, 'utf8'), '{"a":1}\n{"a":2\n{"a":3}\n{"a":4}\n');
  assert.equal(await readJsonLinesReport(path), { records: [{ a: 1 }, { a: 3 }, { a: 4 }], skipped: 1, tornLastLine: false });
});

jsonl('a write that fails half way is reported, and later appends still land on their own lines', async () => {
  const path = join(folder, 'log.jsonl');
  let failNext = false;
  const { fileSystem } = countingFileSystem(() => failNext && !(failNext = false));
  const appender = new JsonlAppender({ fs: fileSystem });
  await appender.append(path, [{ a: 1 }]);
  failNext = true;
  const failed = await appender.append(path, [{ a: 2, padding: 'x'.repeat(100) }]).then(
    () => 'resolved',
    (error: Error) => error.message,
  );
  assert.is(failed, 'disk failed mid-write');
  await appender.append(path, [{ a: 3 }]);
  await appender.close();
  assert.equal(await readJsonLinesReport(path), { records: [{ a: 1 }, { a: 3 }], skipped: 1, tornLastLine: false });
});

jsonl('closeFile waits for the appends under way, closes that file only, and a later append opens it again', async () => {
  const { fileSystem, counts } = countingFileSystem();
  const appender = new JsonlAppender({ fs: fileSystem });
  const [first, second] = [join(folder, 'first.jsonl'), join(folder, 'second.jsonl')];
  await appender.append(second, ['kept open']);
  const pending = appender.append(first, ['one']);
  await appender.closeFile(first);
  await pending;
  assert.equal([counts.opens, counts.closes], [2, 1], 'first is closed, second stays open');
  assert.equal(await readJsonLines(first), ['one']);
  await appender.append(first, ['two']);
  assert.equal(await readJsonLines(first), ['one', 'two']);
  assert.is(counts.opens, 3);
  await appender.closeFile(join(folder, 'never-written.jsonl'));
  await appender.close();
  assert.is(counts.open, 0);
});

jsonl('new files are readable by their owner only', async () => {
  if (process.platform === 'win32') return;
  const path = join(folder, 'deep', 'private.jsonl');
  const appender = new JsonlAppender();
  await appender.append(path, [{ secret: 'issue text' }]);
  await appender.close();
  assert.is((await fs.stat(path)).mode & 0o777, 0o600);
});

jsonl('many appends in one tick become one write', async () => {
  const path = join(folder, 'log.jsonl');
  const { fileSystem, counts } = countingFileSystem();
  const appender = new JsonlAppender({ fs: fileSystem });
  const appends = Array.from({ length: 1000 }, (_, index) => appender.append(path, [{ index }]));
  await Promise.all(appends);
  assert.is(counts.writes, 1);
  await appender.close();
  const records = await readJsonLines<{ index: number }>(path);
  assert.equal(records.map((record) => record.index), Array.from({ length: 1000 }, (_, index) => index));
});

jsonl('appends made by other callbacks of the same event-loop turn share the first one\'s write', async () => {
  const path = join(folder, 'log.jsonl');
  const { fileSystem, counts } = countingFileSystem();
  const appender = new JsonlAppender({ fs: fileSystem });
  // As two requests read in one poll of the sockets: the second one's callback is already queued when the first appends.
  const second = new Promise<void>((resolve, reject) => setImmediate(() => appender.append(path, [{ request: 2 }]).then(resolve, reject)));
  await Promise.all([appender.append(path, [{ request: 1 }]), second]);
  assert.is(counts.writes, 1, 'one write for both');
  await appender.close();
  assert.equal(await readJsonLines(path), [{ request: 1 }, { request: 2 }]);
});

jsonl('appends arriving while a write is under way share the next write', async () => {
  const path = join(folder, 'log.jsonl');
  const { fileSystem, counts } = countingFileSystem();
  const appender = new JsonlAppender({ fs: fileSystem });
  const appends: Promise<void>[] = [];
  for (let index = 0; index < 200; index += 1) {
    appends.push(appender.append(path, [{ index }]));
    if (index % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(appends);
  await appender.close();
  assert.ok(counts.writes <= 21, `${counts.writes} writes for 200 appends in 20 ticks`);
  assert.is((await readJsonLines(path)).length, 200);
});

jsonl('sync asks the disk to keep the records only when wanted: synchronous mode for a file opened for it, else an fsync', async () => {
  const { fileSystem, counts } = countingFileSystem();
  const appender = new JsonlAppender({ fs: fileSystem });
  await appender.append(join(folder, 'log.jsonl'), [{ a: 1 }]);
  assert.equal([counts.flags, counts.syncs], [['a+'], 0], 'a plain append neither syncs nor opens in synchronous mode');
  await appender.append(join(folder, 'log.jsonl'), [{ a: 2 }], { sync: true });
  assert.is(counts.syncs, 1, 'a file already open in plain mode is fsynced');
  await appender.append(join(folder, 'journal.jsonl'), [{ a: 1 }], { sync: true });
  assert.equal([counts.flags, counts.syncs], [['a+', 'as+'], 1], 'a file opened for a synced append is in synchronous mode');
  const durable = new JsonlAppender({ fs: fileSystem, sync: true });
  await durable.append(join(folder, 'inbox.jsonl'), [{ a: 2 }]);
  assert.equal(counts.flags.at(-1), 'as+', 'the default applies');
  await appender.close();
  await durable.close();
  assert.equal(await readJsonLines(join(folder, 'journal.jsonl')), [{ a: 1 }]);
});

jsonl('keeps at most the allowed number of files open, closing the least recently used', async () => {
  const { fileSystem, counts } = countingFileSystem();
  const appender = new JsonlAppender({ fs: fileSystem, maxOpenFiles: 2 });
  const paths = Array.from({ length: 5 }, (_, index) => join(folder, `step-${index}.jsonl`));
  for (let round = 0; round < 3; round += 1) {
    for (const path of paths) await appender.append(path, [{ round }]);
    // The two most recent stay open: appending to them again opens nothing.
    const opens = counts.opens;
    await appender.append(paths[4]!, [{ round, again: true }]);
    await appender.append(paths[3]!, [{ round, again: true }]);
    assert.is(counts.opens, opens);
  }
  assert.ok(counts.mostOpen <= 2, `${counts.mostOpen} files were open at once`);
  await appender.close();
  assert.is(counts.open, 0, 'close closes every file');
  assert.is((await readJsonLines(paths[0]!)).length, 3);
  assert.is((await readJsonLines(paths[4]!)).length, 6);
});

jsonl('creates missing folders and appends again after close', async () => {
  const path = join(folder, 'runs', 'run_1', 'logs', 'build.0.jsonl');
  const appender = new JsonlAppender();
  await appender.append(path, [{ a: 1 }]);
  await appender.close();
  await appender.append(path, [{ a: 2 }]);
  await appender.close();
  assert.equal(await readJsonLines(path), [{ a: 1 }, { a: 2 }]);
});

jsonl('a record with no JSON form is refused and nothing of that append is written', async () => {
  const path = join(folder, 'log.jsonl');
  const appender = new JsonlAppender();
  try {
    await appender.append(path, [{ ok: 1 }, undefined]);
    assert.unreachable('should refuse');
  } catch (error) {
    assert.instance(error, ValidationError);
    assert.match((error as Error).message, /Cannot append undefined to .*log\.jsonl/);
  }
  await appender.append(path, [{ ok: 2 }]);
  await appender.close();
  assert.equal(await readJsonLines(path), [{ ok: 2 }]);
});

jsonl('readJsonFile: a missing file is undefined, a good one parses, a broken one names itself', async () => {
  const path = join(folder, 'config.json');
  assert.is(await readJsonFile(path), undefined);
  await fs.writeFile(path, '\ufeff{"format":1}');
  assert.equal(await readJsonFile(path), { format: 1 });
  await fs.writeFile(path, '{"format":1,,"x":2}');
  try {
    await readJsonFile(path);
    assert.unreachable('should throw');
  } catch (error) {
    assert.instance(error, CorruptFileError);
    const corrupt = error as CorruptFileError;
    assert.is(corrupt.name, 'CorruptFileError');
    assert.is(corrupt.path, path);
    assert.ok(corrupt.message.startsWith(`Cannot read ${path}: `), corrupt.message);
    assert.match(corrupt.message, /position 12/);
    assert.ok(corrupt.message.endsWith('. Fix or remove the file.'), corrupt.message);
  }
  await fs.writeFile(path, '');
  try {
    await readJsonFile(path);
    assert.unreachable('an empty file should throw');
  } catch (error) {
    assert.instance(error, CorruptFileError);
  }
});

jsonl.run();
