// Runs on runners (issue 25, engine/runner.ts): the run service drives the same steps here, in a
// bubblewrap sandbox, or on another machine over ssh (a real sshd on 127.0.0.1), without knowing
// which. Which runner a run uses is recorded on it, and each runner's maxParallelRuns holds.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { Project, Runner } from '../../src/core/api';
import { runRemote } from '../../src/engine/ssh-run';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { startSshd, sshdTools, stopSshd, type TestSshd } from '../helpers/sshd';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';
import { suiteNeeding } from '../helpers/tools';

// A home folder of the test's own, with a secret planted where an issue's text would steer an agent.
const home = makeTempDir('factory-seam-home');
process.env.HOME = home;
mkdirSync(join(home, '.ssh'), { mode: 0o700 });
writeFileSync(join(home, '.ssh', 'planted'), 'planted-secret-4711\n', { mode: 0o600 });
const PATH = process.env.PATH ?? '/usr/bin:/bin';
/** Sleep lengths no other test process uses, so their processes are found by their command lines alone. */
const nap = (offset: number) => String(200_000 + (process.pid % 100_000) * 10 + offset);
const napping = (offset: number) => marked(`sleep\u0000${nap(offset)}`).length;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' } }).trim();
}

/** A project folder (a git repository with one commit, pushed to a bare `origin` beside it). */
async function project(factory: TestFactory, name: string, extra: Partial<Project> = {}): Promise<Project> {
  const root = makeTempDir('factory-seam-project');
  const origin = join(root, 'origin.git');
  const path = join(root, 'work');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', origin]);
  execFileSync('git', ['init', '-q', '-b', 'main', path]);
  writeFileSync(join(path, 'README'), 'hello\n');
  git(path, 'add', 'README');
  git(path, 'commit', '-qm', 'first');
  git(path, 'remote', 'add', 'origin', origin);
  git(path, 'push', '-q', 'origin', 'main');
  return factory.api.saveProject({ name, path, worktrees: true, ...extra } as Project);
}

/** Pids of the processes whose command line holds `marker`. */
function marked(marker: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) && !/^\S+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  }).map(Number);
}

// ─── Sandbox ───

const sandboxed = suiteNeeding<{ factory: TestFactory }>('runners-seam sandbox', [{ command: 'bwrap', package: 'bubblewrap' }, { command: 'git', package: 'git' }]);

sandboxed.before.each(async (context) => {
  context.factory = await startTestFactory();
});
sandboxed.after.each(async (context) => {
  await context.factory.close();
});

sandboxed('a shell step under a sandbox runner cannot read a secret planted in the home folder; a local run can', async ({ factory }) => {
  const box = await factory.api.saveRunner({ name: 'Box', kind: 'sandbox' } as Runner);
  const peek = [shell('peek', 'cat ~/.ssh/planted')];
  const inBox = await factory.pipeline(peek, { runnerId: box.id });
  assert.is(inBox.runnerId, box.id);
  const here = await factory.pipeline(peek, { name: 'Here' });
  const boxed = await factory.waitForRun((await factory.api.startRun({ pipelineId: inBox.id })).id, ['succeeded', 'failed']);
  assert.is(boxed.runnerId, box.id);
  assert.is(boxed.status, 'failed');
  assert.match(boxed.steps[0]!.error!, /No such file/);
  assert.not.match(boxed.steps[0]!.output ?? '', /planted-secret/);
  const local = await factory.waitForRun((await factory.api.startRun({ pipelineId: here.id })).id, ['succeeded', 'failed']);
  assert.is(local.runnerId, 'local');
  assert.is(local.status, 'succeeded', local.error);
  assert.match(local.steps[0]!.output!, /planted-secret-4711/);
});

sandboxed('the setup command runs inside the sandbox too', async ({ factory }) => {
  const box = await factory.api.saveRunner({ name: 'Box', kind: 'sandbox' } as Runner);
  const boxed = await project(factory, 'Boxed', { runnerId: box.id, setupCommand: 'cat ~/.ssh/planted' });
  const pipeline = await factory.api.savePipeline({ projectId: boxed.id, name: 'P', variables: {}, steps: [shell('x', 'true')] });
  const run = await factory.waitForRun((await factory.api.startRun({ pipelineId: pipeline.id })).id, ['succeeded', 'failed']);
  assert.is(run.runnerId, box.id, 'the project names the runner');
  assert.is(run.status, 'failed');
  assert.match(run.error!, /Setup failed/);
});

sandboxed("a runner's maxParallelRuns holds its runs queued beside the global cap", async ({ factory }) => {
  const box = await factory.api.saveRunner({ name: 'One at a time', kind: 'sandbox', maxParallelRuns: 1 } as Runner);
  const shared = makeTempDir('factory-seam-shared');
  const plain = await factory.api.saveProject({ name: 'Plain', path: shared, worktrees: false } as Project);
  const pipeline = await factory.api.savePipeline({
    projectId: plain.id, name: 'Waits', variables: {}, runnerId: box.id,
    steps: [shell('wait', 'mkdir -p marks; mktemp marks/XXXXXX; while [ ! -f go ]; do sleep 0.05; done')],
  } as never);
  const first = await factory.api.startRun({ pipelineId: pipeline.id });
  const second = await factory.api.startRun({ pipelineId: pipeline.id });
  await waitFor(() => existsSync(join(shared, 'marks')) && readdirSync(join(shared, 'marks')).length >= 1, 10_000, 'a run to start its step');
  // Both were queued at once and the global cap is 2: only the runner's cap keeps the second queued.
  assert.is((await factory.api.getRun(first.id))!.status, 'running');
  assert.is((await factory.api.getRun(second.id))!.status, 'queued');
  writeFileSync(join(shared, 'go'), '');
  for (const run of [first, second]) assert.is((await factory.waitForRun(run.id, ['succeeded', 'failed'])).status, 'succeeded');
  removeTempDir(shared);
});

sandboxed('a pipeline or trigger naming a runner that does not exist is refused in words', async ({ factory }) => {
  try {
    await factory.pipeline([shell('x', 'true')], { runnerId: 'rnr_0000000000000000' });
    assert.unreachable('saved');
  } catch (error) {
    assert.match((error as Error).message, /The runner `rnr_0000000000000000` does not exist/);
  }
  const pipeline = await factory.pipeline([shell('x', 'true')]);
  try {
    await factory.api.saveTrigger({ name: 'Hook', kind: 'webhook', enabled: true, pipelineId: pipeline.id, runnerId: 'rnr_0000000000000000' } as never);
    assert.unreachable('saved');
  } catch (error) {
    assert.match((error as Error).message, /The runner `rnr_0000000000000000` does not exist/);
  }
});

sandboxed.run();

// ─── ssh ───

const remote = suiteNeeding<{ sshd: TestSshd; factory: TestFactory; runner: Runner; project: Project }>('runners-seam ssh', sshdTools);

remote.before(async (context) => {
  context.sshd = await startSshd();
  context.factory = await startTestFactory({ ssh: async () => context.sshd.setup });
  const { host, port, user, identityFile, workDir } = context.sshd.runner;
  context.runner = await context.factory.api.saveRunner({ name: 'Remote', kind: 'ssh', host, port, user, identityFile, knownHosts: 'strict', workDir } as Runner);
  context.project = await project(context.factory, 'Remote project', { runnerId: context.runner.id });
});
remote.after(async (context) => {
  await context.factory?.close();
  stopSshd(context.sshd);
});

remote('an ssh run works in the remote workDir, streams its output, and its commits come home on factory/<run-id>', async ({ factory, sshd, runner, project: local }) => {
  const go = join(sshd.dir, 'go-stream');
  const pipeline = await factory.api.savePipeline({
    projectId: local.id, name: 'Remote work', variables: {},
    steps: [
      shell('where', `pwd; echo first-line; while [ ! -f ${go} ]; do sleep 0.05; done; echo after-go`),
      shell('work', 'echo made > made.txt && git add made.txt && git -c user.name=A -c user.email=a@e commit -qm "made remotely" && echo left > left.txt'),
    ],
  });
  const started = await factory.api.startRun({ pipelineId: pipeline.id });
  // Only a line that streamed into the log lets the step finish.
  await waitFor(async () => (await factory.api.readStepLog(started.id, 'where')).some((line) => line.stream === 'out' && line.line === 'first-line'), 20_000, 'the first line in the log');
  writeFileSync(go, '');
  const run = await factory.waitForRun(started.id, ['succeeded', 'failed'], 30_000);
  assert.is(run.status, 'succeeded', run.error);
  assert.is(run.runnerId, runner.id);
  assert.is(run.steps[0]!.output!.split('\n')[0], join(sshd.workDir, 'worktrees', run.id));
  assert.match(run.steps[0]!.output!, /after-go/);
  const branch = `factory/${run.id}`;
  assert.is(run.branch, branch);
  assert.is(run.workspace, undefined);
  assert.is(git(local.path, 'log', '-1', '--format=%s', `${branch}~1`), 'made remotely');
  assert.is(git(local.path, 'show', `${branch}:made.txt`), 'made');
  assert.is(git(local.path, 'show', `${branch}:left.txt`), 'left', 'uncommitted work is committed before it comes home');
  assert.not.ok(existsSync(join(sshd.workDir, 'worktrees', run.id)), 'the remote worktree is removed');
});

remote('cancelling an ssh run leaves no remote process', async ({ factory, project: local }) => {
  const marker = `seam-cancel-${process.pid}`;
  const pipeline = await factory.api.savePipeline({
    projectId: local.id, name: 'Sleeps', variables: {},
    steps: [shell('sleepy', `sh -c 'sleep ${nap(1)}; : ${marker}' & sh -c 'sleep ${nap(2)}; : ${marker}'; wait`)],
  });
  const started = await factory.api.startRun({ pipelineId: pipeline.id });
  // The sleeps themselves (the local ssh's command line holds the marker too, before anything runs there).
  await waitFor(() => napping(1) === 1 && napping(2) === 1, 20_000, 'the remote sleeps');
  await factory.api.cancelRun(started.id);
  const run = await factory.waitForRun(started.id, ['cancelled', 'failed']);
  assert.is(run.status, 'cancelled');
  await waitFor(() => marked(marker).length === 0 && napping(1) === 0 && napping(2) === 0, 10_000, 'no remote process left');
});

remote('after Factory is killed, a restart stops the remote processes of runs it no longer runs', async ({ sshd }) => {
  const marker = `seam-orphan-${process.pid}`;
  const orphaned = runRemote(sshd.runner, sshd.setup, { key: 'run_seamorphan.build', cwd: sshd.workDir, command: 'sh', args: ['-c', `sh -c 'sleep ${nap(3)}; : ${marker}'; : ${marker}`], env: { PATH } });
  await waitFor(() => napping(3) === 1, 10_000, 'the orphan');
  // The Factory that started it dies: its local ssh is killed with it, and the remote shells live on.
  for (const pid of marked('run_seamorphan.build.pgid')) if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('ssh')) process.kill(pid, 'SIGKILL');
  await orphaned;
  assert.ok(marked(marker).length >= 2, 'the remote processes outlived the local ssh');
  // A Factory starting on a data folder with the ssh runner stops them.
  const again = await startTestFactory({ dir: makeTempDir('factory-seam-restart'), ssh: async () => sshd.setup });
  try {
    const { host, port, user, identityFile, workDir } = sshd.runner;
    await again.api.saveRunner({ name: 'Remote', kind: 'ssh', host, port, user, identityFile, knownHosts: 'strict', workDir } as Runner);
    await again.stop();
    const restarted = await startTestFactory({ dir: again.dir, ssh: async () => sshd.setup });
    try {
      await waitFor(() => marked(marker).length === 0, 15_000, 'the leftover processes to be stopped');
    } finally {
      await restarted.close();
    }
  } finally {
    removeTempDir(again.dir);
  }
});

remote.run();
