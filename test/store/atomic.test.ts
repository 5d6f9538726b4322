import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { removeStaleTempFiles, writeFileAtomic, type AtomicFileHandle, type AtomicFileSystem } from '../../src/store/atomic';

const atomic = suite('atomic');
const isWindows = process.platform === 'win32';

let folder = '';
atomic.before.each(async () => {
  folder = await fs.mkdtemp(join(tmpdir(), 'factory-atomic-'));
});
atomic.after.each(async () => {
  await fs.rm(folder, { recursive: true, force: true });
});

const tempFiles = async () => (await fs.readdir(folder)).filter((name) => name.endsWith('.tmp'));

type Call = { operation: string; path: string; mode?: number };

/** The real file system, recording each call, with `fail` deciding which call throws instead. */
function recordingFileSystem(fail: (call: Call) => Error | undefined = () => undefined): { fileSystem: AtomicFileSystem; calls: Call[] } {
  const calls: Call[] = [];
  const check = (call: Call) => {
    calls.push(call);
    const error = fail(call);
    if (error) throw error;
  };
  const fileSystem: AtomicFileSystem = {
    async open(path, flags, mode) {
      check({ operation: 'open', path, mode });
      const handle = await fs.open(path, flags, mode);
      const wrapped: AtomicFileHandle = {
        async writeFile(data) {
          check({ operation: 'write', path });
          await handle.writeFile(data);
        },
        async sync() {
          check({ operation: 'sync', path });
          await handle.sync();
        },
        async close() {
          calls.push({ operation: 'close', path });
          await handle.close();
        },
      };
      return wrapped;
    },
    async rename(oldPath, newPath) {
      check({ operation: 'rename', path: newPath });
      await fs.rename(oldPath, newPath);
    },
    async unlink(path) {
      calls.push({ operation: 'unlink', path });
      await fs.unlink(path);
    },
    stat: (path) => fs.stat(path),
  };
  return { fileSystem, calls };
}

atomic('writes a new file and replaces the content of an existing one', async () => {
  const target = join(folder, 'config.json');
  await writeFileAtomic(target, '{"a":1}');
  assert.is(await fs.readFile(target, 'utf8'), '{"a":1}');
  await writeFileAtomic(target, new TextEncoder().encode('second, and longer than the first'));
  assert.is(await fs.readFile(target, 'utf8'), 'second, and longer than the first');
  await writeFileAtomic(target, 'x');
  assert.is(await fs.readFile(target, 'utf8'), 'x');
  assert.equal(await tempFiles(), []);
});

atomic('a secret written with mode 0o600 is never readable by others, not even as a temp file', async () => {
  if (isWindows) return;
  const target = join(folder, 'remote.json');
  await fs.writeFile(target, 'old', { mode: 0o644 });
  const temporaryModes: number[] = [];
  const { fileSystem } = recordingFileSystem((call) => {
    if (call.operation === 'write') {
      // Runs before the content reaches the temp file: check what the file already allows.
      temporaryModes.push(statSync(call.path).mode & 0o777);
    }
    return undefined;
  });
  await writeFileAtomic(target, 'token', { mode: 0o600, fs: fileSystem });
  assert.is((await fs.stat(target)).mode & 0o777, 0o600);
  assert.equal(temporaryModes, [0o600]);
  assert.is(await fs.readFile(target, 'utf8'), 'token');
});

atomic('keeps the permissions of the file it replaces when no mode is given', async () => {
  if (isWindows) return;
  const target = join(folder, 'remote.json');
  await writeFileAtomic(target, 'one', { mode: 0o600 });
  await writeFileAtomic(target, 'two');
  assert.is((await fs.stat(target)).mode & 0o777, 0o600);
  assert.is(await fs.readFile(target, 'utf8'), 'two');
});

for (const operation of ['write', 'sync', 'rename'] as const) {
  atomic(`a failing ${operation} keeps the old content, leaves no temp file and rejects with that error`, async () => {
    const target = join(folder, 'config.json');
    await fs.writeFile(target, 'old content');
    const failure = Object.assign(new Error(`disk says no to ${operation}`), { code: 'EIO' });
    const { fileSystem } = recordingFileSystem((call) => (call.operation === operation && call.path !== folder ? failure : undefined));
    try {
      await writeFileAtomic(target, 'new content', { fs: fileSystem });
      assert.unreachable('the write should have failed');
    } catch (error) {
      assert.is(error, failure);
    }
    assert.is(await fs.readFile(target, 'utf8'), 'old content');
    assert.equal(await tempFiles(), []);
  });
}

atomic('a failing write of a file that did not exist leaves no file at all', async () => {
  const target = join(folder, 'new.json');
  const { fileSystem } = recordingFileSystem((call) => (call.operation === 'sync' ? new Error('no space') : undefined));
  await writeFileAtomic(target, 'data', { fs: fileSystem }).then(
    () => assert.unreachable('should fail'),
    (error: Error) => assert.is(error.message, 'no space'),
  );
  assert.equal(await fs.readdir(folder), []);
});

atomic('syncs the temp file before the rename and the folder after it', async () => {
  if (isWindows) return;
  const target = join(folder, 'config.json');
  const { fileSystem, calls } = recordingFileSystem();
  await writeFileAtomic(target, 'data', { fs: fileSystem });
  const steps = calls.map((call) => `${call.operation} ${call.path === folder ? 'folder' : call.path === target ? 'target' : 'temp'}`);
  assert.equal(steps, ['open temp', 'write temp', 'sync temp', 'close temp', 'rename target', 'open folder', 'sync folder', 'close folder']);
  assert.match(calls[0]!.path, /[/\\]\.config\.json\.\d+\.[0-9a-f]{8}\.tmp$/);
});

atomic('a failing folder sync rejects, since the rename may not survive a power loss', async () => {
  if (isWindows) return;
  const target = join(folder, 'config.json');
  const { fileSystem } = recordingFileSystem((call) => (call.operation === 'sync' && call.path === folder ? new Error('EIO on folder') : undefined));
  await writeFileAtomic(target, 'data', { fs: fileSystem }).then(
    () => assert.unreachable('should fail'),
    (error: Error) => assert.is(error.message, 'EIO on folder'),
  );
  assert.equal(await tempFiles(), []);
});

atomic('removes temp files of processes that died, and keeps everything else', async () => {
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
  const stale = [`.config.json.${deadPid}.0123abcd.tmp`, `.run.json.${deadPid}.ffffffff.tmp`];
  const kept = ['config.json', '.hidden', 'notes.tmp', `.config.json.${process.pid}.0123abcd.tmp`];
  for (const name of [...stale, ...kept]) await fs.writeFile(join(folder, name), 'x');
  assert.is(await removeStaleTempFiles(folder), 2);
  assert.equal((await fs.readdir(folder)).sort(), [...kept].sort());
  assert.is(await removeStaleTempFiles(folder), 0);
});

atomic('cleaning a folder that does not exist removes nothing', async () => {
  assert.is(await removeStaleTempFiles(join(folder, 'missing')), 0);
});

atomic.run();
