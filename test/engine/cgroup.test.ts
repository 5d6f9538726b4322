// Step cgroups against a folder laid out like cgroupfs (so every branch runs on any machine), and
// the parsing of /proc/self/cgroup and /proc/self/mountinfo.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cgroupFolderOf, parseUnifiedCgroupPath, StepCgroup, STEP_CGROUP_PREFIX } from '../../src/engine/cgroup';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const cgroups = suite<{ root: string }>('cgroup');

cgroups.before.each((context) => {
  context.root = makeTempDir('factory-cgroupfs');
  writeFileSync(join(context.root, 'cgroup.procs'), '');
});

cgroups.after.each((context) => {
  removeTempDir(context.root);
});

/** Lays out the files the kernel shows in a new cgroup (those we use); `kill` false: a kernel before 5.14. */
function layOut(folder: string, members: number[], kill: boolean): void {
  writeFileSync(join(folder, 'cgroup.procs'), members.map((pid) => `${pid}\n`).join(''));
  writeFileSync(join(folder, 'cgroup.events'), 'populated 1\nfrozen 0\n');
  writeFileSync(join(folder, 'cgroup.freeze'), '0');
  if (kill) writeFileSync(join(folder, 'cgroup.kill'), '');
}

const mountinfo = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

cgroups('reads the cgroup v2 path of /proc/self/cgroup, and finds none on cgroup v1 alone', () => {
  assert.is(parseUnifiedCgroupPath('4:memory:/x\n0::/user.slice/app.scope\n'), '/user.slice/app.scope');
  assert.is(parseUnifiedCgroupPath('0::/\n'), '/');
  assert.is(parseUnifiedCgroupPath('4:memory:/x\n1:name=systemd:/\n'), undefined);
});

cgroups('finds the folder of a cgroup on a hybrid system, a cgroup v2 one, and a mount of a subtree', () => {
  assert.is(cgroupFolderOf('/', mountinfo), '/sys/fs/cgroup/unified');
  assert.is(cgroupFolderOf('/a/b', mountinfo), '/sys/fs/cgroup/unified/a/b');
  assert.is(cgroupFolderOf('/user.slice', '25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw'), '/sys/fs/cgroup/user.slice');
  const subtree = '25 1 0:22 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw';
  assert.is(cgroupFolderOf('/lxc/c1/init', subtree), '/sys/fs/cgroup/init');
  assert.is(cgroupFolderOf('/lxc/c1', subtree), '/sys/fs/cgroup');
  assert.is(cgroupFolderOf('/lxc/c10', subtree), undefined, 'a sibling whose name starts the same is not inside');
  assert.is(cgroupFolderOf('/', '25 1 0:22 / /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw'), '/mnt/my cgroups');
  assert.is(cgroupFolderOf('/', mountinfo.split('\n').slice(0, 2).join('\n')), undefined, 'cgroup v1 only');
});

cgroups('makes a new cgroup per call under the parent, and removes it once empty', async ({ root }) => {
  const first = (await StepCgroup.create(root))!;
  const second = (await StepCgroup.create(root))!;
  assert.is.not(first.folder, second.folder);
  assert.match(first.folder, new RegExp(`^${root}/${STEP_CGROUP_PREFIX}[0-9a-f]{16}$`));
  assert.ok(existsSync(first.folder));
  assert.is(await first.removeWhenEmpty(0), true);
  assert.not.ok(existsSync(first.folder));
  writeFileSync(join(second.folder, 'cgroup.procs'), '123\n'); // rmdir of a non-empty folder fails, as EBUSY does on cgroupfs
  assert.is(await second.removeWhenEmpty(0), false);
});

cgroups('where no cgroup can be made, says so, and every later call at once', async ({ root }) => {
  const missing = join(root, 'not-a-cgroup');
  assert.is(await StepCgroup.create(missing), undefined);
  mkdirSync(missing);
  assert.is(await StepCgroup.create(missing), undefined, 'given up for good');
});

cgroups('starts the child with this process inside the cgroup, then moves this process back', async ({ root }) => {
  const cgroup = (await StepCgroup.create(root))!;
  layOut(cgroup.folder, [], true);
  let duringStart = '';
  const started = cgroup.startInside(() => {
    duringStart = readFileSync(join(cgroup.folder, 'cgroup.procs'), 'utf8');
    return 42;
  });
  assert.equal(started, { value: 42, inside: true });
  assert.is(duringStart, String(process.pid));
  assert.is(readFileSync(join(root, 'cgroup.procs'), 'utf8'), String(process.pid), 'moved back to the parent');
  assert.throws(() => cgroup.startInside(() => { throw new Error('spawn failed'); }), /spawn failed/);
  assert.is(readFileSync(join(root, 'cgroup.procs'), 'utf8'), String(process.pid), 'moved back after an error too');
});

cgroups('a cgroup this process cannot enter starts the child outside and gives cgroups up', async ({ root }) => {
  const cgroup = (await StepCgroup.create(root))!; // no cgroup.procs in it: writing it fails
  assert.equal(cgroup.startInside(() => 'child'), { value: 'child', inside: false });
  assert.is(await StepCgroup.create(root), undefined);
});

cgroups('kills at once through cgroup.kill', async ({ root }) => {
  const cgroup = (await StepCgroup.create(root))!;
  layOut(cgroup.folder, [], true);
  await cgroup.kill();
  assert.is(readFileSync(join(cgroup.folder, 'cgroup.kill'), 'utf8'), '1');
  assert.is(readFileSync(join(cgroup.folder, 'cgroup.freeze'), 'utf8'), '0', 'no freeze needed');
});

cgroups('without cgroup.kill (before Linux 5.14), freezes, kills each member, thaws', async ({ root }) => {
  const sleeps = [spawn('sleep', ['300'], { stdio: 'ignore' }), spawn('sleep', ['300'], { stdio: 'ignore' })];
  const bystander = spawn('sleep', ['300'], { stdio: 'ignore' });
  try {
    const cgroup = (await StepCgroup.create(root))!;
    layOut(cgroup.folder, [...sleeps.map((child) => child.pid!), process.pid], false);
    const killing = cgroup.kill();
    await waitFor(() => readFileSync(join(cgroup.folder, 'cgroup.freeze'), 'utf8') === '1', 2000, 'the freeze');
    assert.ok(sleeps.every((child) => child.exitCode === null && child.signalCode === null), 'nothing killed before it is frozen');
    writeFileSync(join(cgroup.folder, 'cgroup.events'), 'populated 1\nfrozen 1\n');
    await killing;
    await waitFor(() => sleeps.every((child) => child.signalCode === 'SIGKILL'), 2000, 'the members to be killed');
    assert.is(readFileSync(join(cgroup.folder, 'cgroup.freeze'), 'utf8'), '0', 'thawed');
    assert.is(bystander.signalCode, null, 'a process outside the cgroup is left alone (and so are we)');
  } finally {
    for (const child of [...sleeps, bystander]) child.kill('SIGKILL');
  }
});

cgroups('leaves no step cgroup behind in the parent', async ({ root }) => {
  const made = await Promise.all([1, 2, 3].map(() => StepCgroup.create(root)));
  await Promise.all(made.map((cgroup) => cgroup!.removeWhenEmpty(0)));
  assert.equal(readdirSync(root).filter((name) => name.startsWith(STEP_CGROUP_PREFIX)), []);
});

cgroups('at a restart, removes the empty step cgroups left long ago, and nothing else', async ({ root }) => {
  const longAgo = new Date(Date.now() - 120_000);
  for (const name of ['factory-step-old', 'factory-step-busy', 'factory-step-new', 'other-old']) mkdirSync(join(root, name));
  writeFileSync(join(root, 'factory-step-busy', 'cgroup.procs'), '123\n'); // not empty: rmdir fails
  for (const name of ['factory-step-old', 'factory-step-busy', 'other-old']) utimesSync(join(root, name), longAgo, longAgo);
  await StepCgroup.removeStale(60_000, root);
  assert.equal(readdirSync(root).sort(), ['cgroup.procs', 'factory-step-busy', 'factory-step-new', 'other-old']);
});

cgroups.run();
