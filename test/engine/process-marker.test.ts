// Finding processes by the marker in their environment, against a folder laid out like /proc, and
// against the real /proc with a real process.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createProcessMarker, findMarkedProcesses } from '../../src/engine/process-marker';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const markers = suite<{ proc: string }>('process marker');

markers.before.each((context) => {
  context.proc = makeTempDir('factory-proc');
});

markers.after.each((context) => {
  removeTempDir(context.proc);
});

/** A fake /proc/<pid> with the given environment strings (NUL-separated, as the kernel shows them). */
function fakeProcess(proc: string, pid: number | string, environment?: string[], stat?: string): void {
  const folder = join(proc, String(pid));
  mkdirSync(folder);
  if (environment) writeFileSync(join(folder, 'environ'), environment.map((entry) => `${entry}\0`).join(''));
  if (stat) writeFileSync(join(folder, 'stat'), stat);
}

markers('a marker is the variable and 32 random hex digits, new each time', () => {
  const first = createProcessMarker();
  const second = createProcessMarker();
  assert.is(first.name, 'FACTORY_PROCESS_MARKER');
  assert.match(first.value, /^[0-9a-f]{32}$/);
  assert.is(first.entry, `FACTORY_PROCESS_MARKER=${first.value}`);
  assert.is.not(first.value, second.value);
});

markers('finds the processes whose environment holds the whole entry, and no others', async ({ proc }) => {
  const entry = 'FACTORY_PROCESS_MARKER=abc123';
  fakeProcess(proc, 100, [entry, 'PATH=/bin']);
  fakeProcess(proc, 101, ['PATH=/bin', entry, 'HOME=/root']);
  fakeProcess(proc, 102, ['PATH=/bin', entry]);
  fakeProcess(proc, 200, ['PATH=/bin', `${entry}def`], 'a longer value');
  fakeProcess(proc, 201, [`OTHER_${entry}`]);
  fakeProcess(proc, 202, [`X=${entry}`]);
  fakeProcess(proc, 203, []);
  fakeProcess(proc, 204); // unreadable: no environ (a process of another user, or gone)
  fakeProcess(proc, 1, [entry]); // init is never a step's process
  fakeProcess(proc, process.pid, [entry]); // nor are we
  fakeProcess(proc, 'self', [entry]);
  mkdirSync(join(proc, 'sys'));
  assert.equal(await findMarkedProcesses(entry, proc), [100, 101, 102]);
});

markers('calls made at the same time share a pass and each get their own processes', async ({ proc }) => {
  const entries = ['FACTORY_PROCESS_MARKER=one', 'FACTORY_PROCESS_MARKER=two', 'FACTORY_PROCESS_MARKER=three'];
  fakeProcess(proc, 10, [entries[0]!]);
  fakeProcess(proc, 11, ['PATH=/bin', entries[1]!]);
  fakeProcess(proc, 12, [entries[0]!]);
  const answers = await Promise.all([...entries, entries[0]!].map((entry) => findMarkedProcesses(entry, proc)));
  assert.equal(answers, [[10, 12], [11], [], [10, 12]]);
  // A call made while a pass is under way sees what appeared meanwhile.
  const first = findMarkedProcesses(entries[2]!, proc);
  fakeProcess(proc, 13, [entries[2]!]);
  const second = findMarkedProcesses(entries[2]!, proc);
  assert.equal((await second), [13]);
  assert.ok((await first).length <= 1);
});

markers('reads an environment larger than the first buffer (32 KiB)', async ({ proc }) => {
  const entry = 'FACTORY_PROCESS_MARKER=late';
  fakeProcess(proc, 20, [`BIG=${'x'.repeat(100_000)}`, entry]);
  fakeProcess(proc, 21, [`BIG=${'x'.repeat(32_768 - 'BIG=\0'.length)}`]); // exactly the buffer
  fakeProcess(proc, 22, [`BIG=${'x'.repeat(32_768 - 'BIG=\0'.length - entry.length - 1)}`, entry]); // ends where the buffer does
  assert.equal(await findMarkedProcesses(entry, proc), [20, 22]);
});

markers('finds nothing, without failing, where there is no /proc', async ({ proc }) => {
  assert.equal(await findMarkedProcesses('FACTORY_PROCESS_MARKER=abc', join(proc, 'missing')), []);
});

markers('finds a real process by its marker in /proc', async () => {
  if (process.platform !== 'linux') return;
  const marker = createProcessMarker();
  const child = spawn('sleep', ['30'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', [marker.name]: marker.value }, stdio: 'ignore' });
  try {
    await waitFor(async () => (await findMarkedProcesses(marker.entry)).includes(child.pid!), 2000, 'the marked sleep to be found');
    assert.equal(await findMarkedProcesses(marker.entry), [child.pid!]);
  } finally {
    child.kill('SIGKILL');
  }
});

markers.run();
