// Restart safety (DESIGN §4) with real processes: a Factory killed with SIGKILL while one run is
// running, one waits for approval and two are queued, then started again on the same folder.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Run } from '../../src/core/api';
import { startChildFactory, type ChildFactory } from '../helpers/child-factory';
import { approval, shell } from '../helpers/factory';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const childPath = new URL('./factory.child.mjs', import.meta.url).pathname;
const restart = suite('restart');

async function waitForStatus(factory: ChildFactory, runId: string, statuses: Run['status'][]): Promise<Run> {
  let run: Run | undefined;
  await waitFor(async () => {
    run = await factory.call('getRun', runId);
    return Boolean(run && statuses.includes(run.status));
  }, 10_000, `run ${runId} to be ${statuses.join(' or ')} (it is ${run?.status})`);
  return run!;
}

restart('after SIGKILL: the running three-step run is interrupted (no step left pending), the waiting one can be approved, the queued ones run', async () => {
  const dir = makeTempDir('factory-restart');
  let factory: ChildFactory | undefined;
  let leader = 0;
  try {
    factory = await startChildFactory(childPath, dir);
    const { projects } = await factory.call('snapshot');
    const save = (name: string, steps: ReturnType<typeof shell>[]) => factory!.call('savePipeline', { projectId: projects[0]!.id, name, variables: {}, steps });
    const slow = await save('Slow', [shell('prepare', 'echo ready'), shell('work', 'echo "leader $$"; exec sleep 60'), shell('publish', 'echo published')]);
    const gate = await save('Gate', [approval('gate', 'Go?'), shell('after', 'echo approved after restart')]);
    const quick = await save('Quick', [shell('hello', 'echo "hello {{issue.title}}"')]);
    await factory.call('saveSettings', { maxParallelRuns: 1 });

    const waiting = await factory.call('startRun', { pipelineId: gate.id });
    await waitForStatus(factory, waiting.id, ['waiting']);
    const running = await factory.call('startRun', { pipelineId: slow.id });
    await waitFor(async () => {
      const log = await factory!.call('readStepLog', running.id, 'work');
      leader = Number(log.map((line) => /^leader (\d+)$/.exec(line.line)?.[1]).find(Boolean) ?? 0);
      return leader > 0;
    }, 10_000, 'the slow step to start');
    const queuedOne = await factory.call('startRun', { pipelineId: quick.id, issue: { title: 'one' } });
    const queuedTwo = await factory.call('startRun', { pipelineId: quick.id, issue: { title: 'two' } });
    assert.is((await factory.call('getRun', queuedTwo.id))!.status, 'queued');
    // run.json keeps the attempt's process group for a restart; callers never see it.
    const runFile = join(dir, 'runs', running.id, 'run.json');
    const storedStep = () => (JSON.parse(readFileSync(runFile, 'utf8')) as Run).steps[1]!;
    await waitFor(() => existsSync(runFile) && 'processGroup' in storedStep(), 5_000, 'run.json to name the process group');
    assert.not.ok('processGroup' in (await factory.call('getRun', running.id))!.steps[1]!);

    await factory.kill('SIGKILL');
    factory = await startChildFactory(childPath, dir);

    const interrupted = (await factory.call('getRun', running.id))!;
    assert.is(interrupted.status, 'failed');
    assert.is(interrupted.error, 'interrupted');
    // The step that ran failed as interrupted; the one before keeps its success, the one after was skipped.
    assert.equal(interrupted.steps.map((step) => [step.id, step.status, step.error]), [
      ['prepare', 'succeeded', undefined],
      ['work', 'failed', 'interrupted'],
      ['publish', 'skipped', undefined],
    ]);
    assert.not.ok('processGroup' in storedStep(), 'the restart forgot the process group');
    // The step the killed engine left behind was stopped by the restart (a zombie counts as gone).
    await waitFor(() => {
      try {
        process.kill(leader, 0);
        return /\) Z/.test(readFileSync(`/proc/${leader}/stat`, 'utf8'));
      } catch {
        return true;
      }
    }, 5000, 'the orphaned step to be stopped');

    assert.is((await waitForStatus(factory, queuedOne.id, ['succeeded'])).steps[0]!.output, 'hello one\n');
    assert.is((await waitForStatus(factory, queuedTwo.id, ['succeeded'])).steps[0]!.output, 'hello two\n');

    assert.is((await factory.call('getRun', waiting.id))!.status, 'waiting');
    await factory.call('approveStep', waiting.id, 'gate', true);
    const approved = await waitForStatus(factory, waiting.id, ['succeeded', 'failed']);
    assert.is(approved.status, 'succeeded');
    assert.is(approved.steps[1]!.output, 'approved after restart\n');

    const retried = await factory.call('retryRun', running.id);
    assert.is(retried.status, 'queued');
    await factory.call('cancelRun', running.id);
  } finally {
    if (leader) {
      try {
        process.kill(-leader, 'SIGKILL'); // the step the killed engine left behind
      } catch {}
    }
    await factory?.kill('SIGKILL');
    removeTempDir(dir);
  }
});

restart.run();
