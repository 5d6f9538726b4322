// Following a process tree through /proc: against a folder laid out like /proc (reparenting, a
// reused pid, a kernel without the children files), and against the real /proc.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DescendantTracker, parseProcessStatus } from '../../src/engine/descendants';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const descendants = suite<{ proc: string }>('descendants');

descendants.before.each((context) => {
  context.proc = makeTempDir('factory-proc-tree');
});

descendants.after.each((context) => {
  removeTempDir(context.proc);
});

/** A stat line with the fields we read: pid, name, state, ppid, pgrp, …, starttime (field 22). */
function statLine(pid: number, parent: number, startTime: number, name = 'sh'): string {
  const middle = Array.from({ length: 15 }, () => '0').join(' ');
  return `${pid} (${name}) S ${parent} ${pid} ${pid} ${middle} ${startTime} 0 0\n`;
}

/** A fake /proc/<pid>; `children` undefined: no children file (a kernel without CONFIG_PROC_CHILDREN). */
function fakeProcess(proc: string, pid: number, parent: number, startTime: number, children?: number[]): void {
  rmSync(join(proc, String(pid)), { recursive: true, force: true });
  const task = join(proc, String(pid), 'task', String(pid));
  mkdirSync(task, { recursive: true });
  writeFileSync(join(proc, String(pid), 'stat'), statLine(pid, parent, startTime));
  if (children) writeFileSync(join(task, 'children'), children.map((child) => `${child} `).join(''));
}

function gone(proc: string, pid: number): void {
  rmSync(join(proc, String(pid)), { recursive: true, force: true });
}

descendants('reads pid, parent, group and start time, whatever the command name holds', () => {
  assert.equal(parseProcessStatus(statLine(300, 12, 777, 'my) odd (name')), { pid: 300, parent: 12, group: 300, startTime: 777 });
  assert.is(parseProcessStatus('garbage'), undefined);
});

descendants('records children and grandchildren, and keeps one after its parent died and it was reparented', async ({ proc }) => {
  fakeProcess(proc, 100, 1, 50, [101]);
  fakeProcess(proc, 101, 100, 60, [102]);
  fakeProcess(proc, 102, 101, 70, []);
  fakeProcess(proc, 999, 1, 10, []); // unrelated
  const tracker = DescendantTracker.start(100, proc)!;
  await tracker.update();
  assert.equal(await tracker.living(), [100, 101, 102]);
  // 101 exits (`setsid … &` in a subshell): 102 now belongs to init, and a new child appears under 102.
  gone(proc, 101);
  fakeProcess(proc, 102, 1, 70, [103]);
  fakeProcess(proc, 103, 102, 80, []);
  await tracker.update();
  assert.equal(await tracker.living(), [100, 102, 103]);
});

descendants('never counts a reused pid: another process under a recorded pid is not the one seen', async ({ proc }) => {
  fakeProcess(proc, 100, 1, 50, [101]);
  fakeProcess(proc, 101, 100, 60, []);
  const tracker = DescendantTracker.start(100, proc)!;
  await tracker.update();
  gone(proc, 101);
  fakeProcess(proc, 101, 1, 9000, [104]); // pid 101 reused by an unrelated program, with a child
  fakeProcess(proc, 104, 101, 9001, []);
  assert.equal(await tracker.living(), [100], 'the new 101 is not ours');
  await tracker.update();
  assert.equal(await tracker.living(), [100], 'nor is its child');
});

descendants('does not take as a child a process that is no longer the parent’s (a stale children list)', async ({ proc }) => {
  fakeProcess(proc, 100, 1, 50, [101]);
  fakeProcess(proc, 101, 7, 60, []); // its parent field says otherwise: a reused pid
  const tracker = DescendantTracker.start(100, proc)!;
  await tracker.update();
  assert.equal(await tracker.living(), [100]);
});

descendants('without the children files, finds children by the parent field of every process', async ({ proc }) => {
  fakeProcess(proc, 100, 1, 50);
  fakeProcess(proc, 101, 100, 60);
  fakeProcess(proc, 102, 101, 70);
  fakeProcess(proc, 200, 1, 70);
  const tracker = DescendantTracker.start(100, proc)!;
  await tracker.update();
  assert.equal(await tracker.living(), [100, 101, 102]);
});

descendants('a process that cannot be read is not followed', ({ proc }) => {
  assert.is(DescendantTracker.start(4242, proc), undefined);
});

descendants('follows a real process tree, a setsid child that lost its parent included', async () => {
  if (process.platform !== 'linux') return; // no /proc: nothing is followed (see DECISIONS)
  const child = spawn('/bin/sh', ['-c', '(setsid sleep 30 & echo $!; sleep 0.3); wait'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  let escaped = 0;
  try {
    const tracker = DescendantTracker.start(child.pid!)!;
    escaped = await new Promise<number>((resolve) => child.stdout!.once('data', (data: Buffer) => resolve(Number(String(data).trim()))));
    await tracker.update();
    assert.ok((await tracker.living()).includes(escaped), 'seen while its parent lived');
    // The subshell exits, and the shell with it: the setsid sleep was reparented, and is still known.
    await waitFor(async () => {
      await tracker.update();
      return !(await tracker.living()).includes(child.pid!);
    }, 5000, 'the shell to exit');
    assert.equal(await tracker.living(), [escaped]);
  } finally {
    for (const target of [-child.pid!, escaped]) {
      try {
        if (target !== 0) process.kill(target, 'SIGKILL');
      } catch {}
    }
  }
});

descendants.run();
