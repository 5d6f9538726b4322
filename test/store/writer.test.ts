import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AtomicFileSystem } from '../../src/store/atomic';
import { FileWriter } from '../../src/store/writer';

const writer = suite('writer');

let folder = '';
writer.before.each(async () => {
  folder = await fs.mkdtemp(join(tmpdir(), 'factory-writer-'));
});
writer.after.each(async () => {
  await fs.rm(folder, { recursive: true, force: true });
});

/** A latch that a test opens by hand. */
function gate(): { wait: Promise<void>; open(): void } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/**
 * The real file system, counting renames by target; `beforeRename` may delay or fail one.
 */
function countingFileSystem(beforeRename: (target: string, count: number) => Promise<void> | void = () => {}) {
  const renames = new Map<string, number>();
  const fileSystem: AtomicFileSystem = {
    open: (path, flags, mode) => fs.open(path, flags, mode),
    unlink: (path) => fs.unlink(path),
    stat: (path) => fs.stat(path),
    async rename(oldPath, newPath) {
      const count = (renames.get(newPath) ?? 0) + 1;
      renames.set(newPath, count);
      await beforeRename(newPath, count);
      await fs.rename(oldPath, newPath);
    },
  };
  return { fileSystem, renames: (path: string) => renames.get(path) ?? 0 };
}

const exists = (path: string) => fs.access(path).then(() => true, () => false);
const settle = (promise: Promise<void>) => promise.then(() => 'resolved', (error: Error) => error.message);

writer('ten quick writes to one file become one write of the last content, and all resolve', async () => {
  const { fileSystem, renames } = countingFileSystem();
  const files = new FileWriter({ fs: fileSystem });
  const target = join(folder, 'config.json');
  const writes = Array.from({ length: 10 }, (_, index) => files.write(target, `version ${index}`));
  assert.equal(await Promise.all(writes.map(settle)), Array(10).fill('resolved'));
  assert.is(await fs.readFile(target, 'utf8'), 'version 9');
  assert.ok(renames(target) <= 2, `${renames(target)} renames`);
});

writer('writes made while one is on its way share a single follow-up write', async () => {
  const firstRename = gate();
  const { fileSystem, renames } = countingFileSystem((_target, count) => (count === 1 ? firstRename.wait : undefined));
  const files = new FileWriter({ fs: fileSystem });
  const target = join(folder, 'config.json');
  const first = files.write(target, 'version 0');
  while (renames(target) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  let serialised = 0;
  const later = Array.from({ length: 9 }, (_, index) =>
    files.write(target, () => {
      serialised += 1;
      return `version ${index + 1}`;
    }),
  );
  firstRename.open();
  await Promise.all([first, ...later]);
  assert.is(renames(target), 2);
  assert.is(serialised, 1, 'only the content that is written is serialised');
  assert.is(await fs.readFile(target, 'utf8'), 'version 9');
});

writer('a caller resolves only once content at least as new as its own is on disk', async () => {
  const files = new FileWriter();
  const target = join(folder, 'state.json');
  let issued = 0;
  const stale: string[] = [];
  await Promise.all(
    Array.from({ length: 30 }, async (_, index) => {
      await new Promise((resolve) => setTimeout(resolve, index % 7));
      const mine = ++issued;
      await files.write(target, String(mine));
      const onDisk = Number(await fs.readFile(target, 'utf8'));
      if (onDisk < mine) stale.push(`write ${mine} resolved while the file held ${onDisk}`);
    }),
  );
  assert.equal(stale, []);
  assert.is(await fs.readFile(target, 'utf8'), '30');
});

writer('a failed write rejects exactly the callers whose content it carried, and the next write works', async () => {
  const firstRename = gate();
  const { fileSystem, renames } = countingFileSystem(async (_target, count) => {
    if (count === 1) await firstRename.wait;
    if (count === 2) throw new Error('disk full');
  });
  const files = new FileWriter({ fs: fileSystem });
  const target = join(folder, 'config.json');
  const first = settle(files.write(target, 'one'));
  while (renames(target) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  const second = settle(files.write(target, 'two'));
  const third = settle(files.write(target, 'three'));
  firstRename.open();
  assert.equal(await Promise.all([first, second, third]), ['resolved', 'disk full', 'disk full']);
  assert.is(await fs.readFile(target, 'utf8'), 'one');
  await files.write(target, 'four');
  assert.is(await fs.readFile(target, 'utf8'), 'four');
});

writer('content that fails to serialise rejects its callers with that error', async () => {
  const files = new FileWriter();
  const target = join(folder, 'config.json');
  const outcome = await settle(
    files.write(target, () => {
      throw new Error('cannot serialise');
    }),
  );
  assert.is(outcome, 'cannot serialise');
  assert.not.ok(await exists(target), 'nothing was written');
});

writer('a write stalled on one file does not hold up another file', async () => {
  const stalled = gate();
  const slow = join(folder, 'slow.json');
  const { fileSystem } = countingFileSystem((target) => (target === slow ? stalled.wait : undefined));
  const files = new FileWriter({ fs: fileSystem });
  const slowWrite = files.write(slow, 'slow');
  await files.write(join(folder, 'fast.json'), 'fast');
  assert.is(await fs.readFile(join(folder, 'fast.json'), 'utf8'), 'fast');
  assert.not.ok(await exists(slow), 'the stalled file is not there yet');
  stalled.open();
  await slowWrite;
  assert.is(await fs.readFile(slow, 'utf8'), 'slow');
});

writer('flush waits for every queued write, failed ones included', async () => {
  const { fileSystem } = countingFileSystem((target) => (target.endsWith('bad.json') ? Promise.reject(new Error('no')) : undefined));
  const files = new FileWriter({ fs: fileSystem });
  const outcomes: string[] = [];
  for (let index = 0; index < 5; index += 1) {
    void settle(files.write(join(folder, `file-${index}.json`), `content ${index}`)).then((outcome) => outcomes.push(outcome));
  }
  void settle(files.write(join(folder, 'bad.json'), 'x')).then((outcome) => outcomes.push(outcome));
  await files.flush();
  for (let index = 0; index < 5; index += 1) {
    assert.is(await fs.readFile(join(folder, `file-${index}.json`), 'utf8'), `content ${index}`);
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(outcomes.length, 6);
  assert.is(outcomes.filter((outcome) => outcome === 'no').length, 1);
});

writer.run();
