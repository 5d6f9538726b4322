// Recovery after a crash (DESIGN §4 "Restart") with real processes: what a crashed step left
// running is stopped only when it is provably that run's, and no step of an interrupted run is
// left pending or running.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Run, StepRun } from '../../src/core/api';
import type { StoredStepRun } from '../../src/core/runs';
import { StepCgroup } from '../../src/engine/cgroup';
import { recoverRuns } from '../../src/engine/recovery';
import { waitFor } from '../helpers/temp';

const recovery = suite<{ children: ChildProcess[]; pids: number[] }>('recovery');

recovery.before.each((context) => {
  context.children = [];
  context.pids = [];
});

recovery.after.each((context) => {
  for (const pid of [...context.children.map((child) => child.pid!), ...context.pids]) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {}
    }
  }
});

const PATH = process.env.PATH ?? '/usr/bin:/bin';
const NOW = 1_700_000_000_000;

function step(id: string, status: StepRun['status'], processGroup?: number): StoredStepRun {
  return { id, name: id, kind: 'shell', status, attempt: status === 'pending' ? 0 : 1, ...(processGroup ? { processGroup } : {}) };
}

function run(id: string, steps: StoredStepRun[], status: Run['status'] = 'running'): Run {
  return { id, pipelineId: 'pl_1', pipelineName: 'P', projectId: 'pr_1', variables: {}, status, createdAt: NOW - 1000, steps };
}

/** A detached shell (leading its own group) running `script` with `env`; it is killed after the test. */
function start(context: { children: ChildProcess[] }, script: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: { PATH, ...env } });
  context.children.push(child);
  return child;
}

/** Alive and not a zombie. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return false;
  }
}

async function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => child.stdout!.once('data', (data: Buffer) => resolve(String(data).split('\n')[0]!)));
}

recovery('an interrupted three-step run: the running step fails as interrupted, the ones after it are skipped', async () => {
  const saved: Run[] = [];
  const runs = [
    run('run_a', [step('build', 'succeeded'), step('test', 'running'), step('deploy', 'pending')]),
    run('run_b', [step('gate', 'waiting')], 'waiting'),
    run('run_c', [step('one', 'pending')], 'queued'),
  ];
  const interrupted = await recoverRuns(runs, NOW, async (changed) => void saved.push(changed));
  assert.equal(interrupted.map((changed) => changed.id), ['run_a']);
  assert.equal(saved.map((changed) => changed.id), ['run_a']);
  const [a, b, c] = runs;
  assert.is(a!.status, 'failed');
  assert.is(a!.error, 'interrupted');
  assert.is(a!.finishedAt, NOW);
  assert.equal(a!.steps.map((s) => [s.id, s.status, s.error]), [['build', 'succeeded', undefined], ['test', 'failed', 'interrupted'], ['deploy', 'skipped', undefined]]);
  assert.not.ok(a!.steps.some((s) => s.status === 'pending' || s.status === 'running' || s.status === 'waiting'));
  assert.is(b!.status, 'waiting', 'a run waiting for approval keeps waiting');
  assert.is(b!.steps[0]!.status, 'waiting');
  assert.is(c!.status, 'queued');
  assert.is(c!.steps[0]!.status, 'pending', 'a queued run keeps its pending steps');
});

recovery('a stored process group now used by an unrelated program is left alone; the run’s own group is killed', async (context) => {
  if (process.platform !== 'linux') return; // without /proc nothing is killed at all
  // The stored id of run_x's group now leads processes that are not Factory's (the pid was reused).
  const unrelated = start(context, 'exec sleep 300');
  // run_y's step group still runs: its processes carry the run's id.
  const ours = start(context, 'sleep 300 & exec sleep 300', { FACTORY_RUN_ID: 'run_y' });
  const runs = [run('run_x', [step('work', 'running', unrelated.pid)]), run('run_y', [step('work', 'running', ours.pid)])];
  await recoverRuns(runs, NOW, async () => {});
  await waitFor(() => !isRunning(ours.pid!), 3000, 'run_y’s step to be killed');
  assert.ok(isRunning(unrelated.pid!), 'the unrelated program still runs');
  assert.not.ok('processGroup' in runs[0]!.steps[0]!, 'the stored group is forgotten');
});

recovery('a group whose leader is gone is still killed when a member carries the run’s id', async (context) => {
  if (process.platform !== 'linux') return;
  const leader = start(context, 'sleep 300 & echo $!', { FACTORY_RUN_ID: 'run_z' });
  const member = Number(await firstLine(leader));
  context.pids.push(member);
  await waitFor(() => !isRunning(leader.pid!), 3000, 'the leader to exit');
  await recoverRuns([run('run_z', [step('work', 'running', leader.pid)])], NOW, async () => {});
  await waitFor(() => !isRunning(member), 3000, 'the member to be killed');
});

recovery('a process of the run that left the group is killed, and with a cgroup, what cleared its environment in it', async (context) => {
  if (process.platform !== 'linux') return;
  const cgroup = await StepCgroup.create();
  const script = 'setsid sleep 300 & echo $!; setsid env -i sleep 300 & echo $!; exec sleep 300';
  const spawnStep = (): ChildProcess => start(context, script, { FACTORY_RUN_ID: 'run_w' });
  const leader = cgroup ? cgroup.startInside(spawnStep).value : spawnStep();
  const [marked, cleared] = await new Promise<number[]>((resolve) => {
    let text = '';
    leader.stdout!.on('data', (data: Buffer) => {
      text += String(data);
      const pids = text.split('\n').filter(Boolean).map(Number);
      if (pids.length === 2) resolve(pids);
    });
  });
  context.pids.push(marked!, cleared!);
  await waitFor(() => readFileSync(`/proc/${cleared}/cmdline`, 'latin1') === 'sleep\x00300\x00', 3000, 'the environment to be cleared');
  assert.not.ok(readFileSync(`/proc/${cleared}/environ`, 'latin1').includes('FACTORY_RUN_ID'));
  await recoverRuns([run('run_w', [step('work', 'running', leader.pid)])], NOW, async () => {});
  await waitFor(() => !isRunning(leader.pid!) && !isRunning(marked!), 3000, 'the step and its setsid process to be killed');
  if (cgroup) {
    await waitFor(() => !isRunning(cleared!), 3000, 'the process without the run’s id, in the step’s cgroup, to be killed');
    assert.ok(await cgroup.removeWhenEmpty(3000));
  } else {
    // No cgroup here: a process that cleared its environment cannot be told from an unrelated one after a crash.
    assert.ok(isRunning(cleared!));
  }
});

recovery.run();
