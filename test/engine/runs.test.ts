// The run engine through FactoryApi: real shell processes, real files.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogLine } from '../../src/core/api';
import { rejects } from '../helpers/assert';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { waitFor } from '../helpers/temp';

const runs = suite<{ factory: TestFactory }>('runs');

runs.before.each(async (context) => {
  context.factory = await startTestFactory();
});
runs.after.each(async (context) => {
  await context.factory.close();
});

runs('the demo pipeline waits for approval, then uses the chosen option and the comment', async ({ factory }) => {
  const { pipelines } = await factory.api.snapshot();
  const inbox = factory.record('inbox');
  const started = await factory.api.startRun({ pipelineId: pipelines[0]!.id, issue: { title: 'Fix the login page', key: 'ENG-7' } });
  assert.is(started.status, 'queued');
  const waiting = await factory.waitForRun(started.id, ['waiting']);
  const choose = waiting.steps.find((step) => step.kind === 'approval')!;
  assert.is(choose.status, 'waiting');
  assert.match(waiting.steps[0]!.output!, /Fix the login page/);
  await waitFor(() => inbox.some((item) => item.kind === 'run.waiting' && item.runId === started.id), 2000, 'the approval inbox item');

  await factory.api.approveStep(started.id, choose.id, true, 'looks right', ['2']);
  const done = await factory.waitForRun(started.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  const last = done.steps.at(-1)!;
  assert.match(last.output!, /Polish first/);
  assert.match(last.output!, /looks right/);
  assert.equal(done.steps.find((step) => step.id === choose.id)!.approval!.selected, ['2']);
  await waitFor(() => inbox.some((item) => item.kind === 'run.succeeded' && item.runId === started.id), 2000, 'the finished inbox item');
  const log = await factory.api.readStepLog(started.id, last.id);
  assert.ok(log.some((line) => line.stream === 'out' && /Polish first/.test(line.line)));
});

runs('startRun refuses what it cannot run, with clear errors', async ({ factory }) => {
  const { pipelines } = await factory.api.snapshot();
  await rejects(factory.api.startRun({ pipelineId: pipelines[0]!.id, issue: { title: '  ' } }), /^The issue title is empty: an issue needs a title$/m);
  await rejects(factory.api.startRun({ pipelineId: 'pl_0000000000000000' }), /No pipeline with id `pl_0000000000000000`/);
  await rejects(factory.api.startRun('go' as never), /startRun takes/);
  await rejects(factory.api.startRun({ pipelineId: pipelines[0]!.id, variables: { name: 3 } } as never), /^The variable `name` must be text/m);
  assert.equal(await factory.api.listRuns(), []);
});

runs('a run keeps the pipeline it started with: editing the pipeline, or the returned copy, changes nothing', async ({ factory }) => {
  const pipeline = await factory.pipeline([approval('gate', 'First version?')]);
  const first = await factory.api.startRun({ pipelineId: pipeline.id });
  const second = await factory.api.startRun({ pipelineId: pipeline.id });
  first.pipeline!.steps[0]!.name = 'changed by the caller';
  first.variables.extra = 'changed by the caller';
  await factory.api.savePipeline({ ...pipeline, steps: [approval('gate', 'Second version?')] });
  const third = await factory.api.startRun({ pipelineId: pipeline.id });
  for (const run of [first, second]) {
    const stored = await factory.waitForRun(run.id, ['waiting']);
    assert.is((stored.pipeline!.steps[0] as { message: string }).message, 'First version?');
    assert.is(stored.pipeline!.steps[0]!.name, 'gate');
    assert.equal(stored.variables, {});
  }
  assert.is(((await factory.waitForRun(third.id, ['waiting'])).pipeline!.steps[0] as { message: string }).message, 'Second version?');
});

runs('shell steps log stdout and stderr, keep stdout as output, and record the exit code', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('talk', 'echo hello; echo oops >&2; printf "no newline"'), shell('fail', 'exit 3', { continueOnError: true }), shell('after', 'echo still here')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded');
  assert.is(done.steps[0]!.output, 'hello\nno newline');
  assert.is(done.steps[0]!.exitCode, 0);
  assert.is(done.steps[1]!.status, 'failed');
  assert.is(done.steps[1]!.exitCode, 3);
  assert.match(done.steps[1]!.error!, /Exited with code 3/);
  assert.is(done.steps[2]!.output, 'still here\n');
  const log = await factory.api.readStepLog(run.id, 'talk');
  const lines = log.filter((line) => line.stream !== 'info').map((line) => [line.stream, line.line]);
  assert.equal(lines.filter(([stream]) => stream === 'out'), [['out', 'hello'], ['out', 'no newline']]);
  assert.equal(lines.filter(([stream]) => stream === 'err'), [['err', 'oops']]);
  assert.ok(log.every((line) => line.runId === run.id && line.stepId === 'talk' && line.attempt === 1 && typeof line.ts === 'number'));
});

runs('a failing step fails the run with the reason and skips the rest', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('build', 'echo "compile error" >&2; exit 2'), shell('deploy', 'echo deploying')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'failed');
  assert.is(done.error, 'Step `build` failed: Exited with code 2: compile error');
  assert.is(done.steps[1]!.status, 'skipped');
  assert.is(done.steps[1]!.attempt, 0);
});

runs('retries give each attempt its own log, and a timeout fails the step', async ({ factory }) => {
  const pipeline = await factory.pipeline([
    shell('flaky', 'echo "try"; test -f marker || { touch marker; exit 1; }', { retries: 2 }),
    shell('slow', 'sleep 20', { timeoutSec: 1 }),
  ]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed'], 15_000);
  assert.is(done.steps[0]!.status, 'succeeded');
  assert.is(done.steps[0]!.attempt, 2);
  const first = await factory.api.readStepLog(run.id, 'flaky', 1);
  const second = await factory.api.readStepLog(run.id, 'flaky');
  assert.ok(first.every((line) => line.attempt === 1) && second.every((line) => line.attempt === 2));
  assert.ok(first.some((line) => /trying again/.test(line.line)));
  assert.is(done.steps[1]!.status, 'failed');
  assert.match(done.steps[1]!.error!, /Timed out after 1\.0 s/);
  assert.is(done.status, 'failed');
  await rejects(factory.api.readStepLog(run.id, 'flaky', 0), /attempt must be a whole number/);
  assert.equal(await factory.api.readStepLog(run.id, 'flaky', 7), []);
});

runs('approval rules: a choice is required, single mode takes one, unknown ids are ignored', async ({ factory }) => {
  const pipeline = await factory.pipeline([
    approval('pick', 'Pick one', { mode: 'single', options: ['Red', 'Green', 'Blue'] }),
    approval('many', 'Pick some', { mode: 'multiple', options: ['A', 'B', 'C'] }),
    shell('show', 'echo "{{steps.pick.selected}} / {{steps.many.selected}} / {{steps.many.comment}}"'),
  ]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  await factory.waitForRun(run.id, ['waiting']);
  await rejects(factory.api.approveStep(run.id, 'pick', true), /needs a choice to be approved: select one of 1 = Red, 2 = Green, 3 = Blue/);
  await rejects(factory.api.approveStep(run.id, 'pick', true, undefined, ['9']), /needs a choice/);
  await rejects(factory.api.approveStep(run.id, 'pick', true, undefined, ['1', '2']), /exactly one choice, not 2/);
  await rejects(factory.api.approveStep(run.id, 'many', true, undefined, ['1']), /not waiting for approval \(it is pending\)/);
  await rejects(factory.api.approveStep(run.id, 'nope', true), /has no step `nope`/);
  await rejects(factory.api.approveStep(run.id, 'pick', 'yes' as never), /approved must be true or false/);
  await factory.api.approveStep(run.id, 'pick', true, null as never, ['9', '3']);
  await factory.waitForRun(run.id, ['waiting']).then(async () => waitFor(async () => (await factory.api.getRun(run.id))!.steps[1]!.status === 'waiting', 5000, 'the second approval'));
  await factory.api.approveStep(run.id, 'many', true, 'both', ['3', '1', 'x']);
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.steps[2]!.output, 'Blue / A, C / both\n');
  await rejects(factory.api.approveStep(run.id, 'pick', true, undefined, ['1']), /not waiting for approval \(it is succeeded\)/);
});

runs('rejecting finishes the run as rejected with the comment', async ({ factory }) => {
  const pipeline = await factory.pipeline([approval('gate', 'Ship it?'), shell('ship', 'echo shipped')]);
  const inbox = factory.record('inbox');
  const run = await factory.api.startRun({ pipelineId: pipeline.id, issue: { title: 'Release 2.0' } });
  await factory.waitForRun(run.id, ['waiting']);
  await factory.api.approveStep(run.id, 'gate', false, 'not today');
  const done = await factory.waitForRun(run.id, ['rejected']);
  assert.is(done.steps[0]!.status, 'rejected');
  assert.is(done.steps[1]!.status, 'skipped');
  assert.match(done.error!, /Rejected at step `gate`: not today/);
  await waitFor(() => inbox.some((item) => /^Rejected: Release 2\.0/.test(item.title)), 2000, 'the rejection inbox item');
});

runs('an approval records who decided and where: the app door names You, a surface names its person', async ({ factory }) => {
  const pipeline = await factory.pipeline([approval('gate', 'Ship it?'), approval('second', 'Really?'), shell('ship', 'echo shipped')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  await factory.waitForRun(run.id, ['waiting']);
  await factory.api.approveStep(run.id, 'gate', true, 'go');
  await waitFor(async () => (await factory.api.getRun(run.id))!.steps[1]!.status === 'waiting', 5000, 'the second approval');
  await factory.runs.approveStep(run.id, 'second', false, 'needs tests', undefined, { name: 'Ada Lovelace', via: 'linear' });
  const done = await factory.waitForRun(run.id, ['rejected']);
  assert.equal(done.steps[0]!.approval!.by, { name: 'You', via: 'app' });
  assert.equal(done.steps[1]!.approval!.by, { name: 'Ada Lovelace', via: 'linear' });
  assert.is(done.steps[1]!.approval!.comment, 'needs tests');
});

runs('text from the issue never runs as a command', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('say', 'echo "{{issue.title}}"; echo {{issue.description}}')]);
  const title = '$(touch PWNED) `touch PWNED2` "; touch PWNED3; "';
  const run = await factory.api.startRun({ pipelineId: pipeline.id, issue: { title, description: "'; touch PWNED4 #" } });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.steps[0]!.output, `${title}\n'; touch PWNED4 #\n`);
  assert.equal(readdirSync(done.workspace!).filter((name) => name.startsWith('PWNED')), []);
});

runs('a step output larger than the environment allows still reaches a later step exactly', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('big', "head -c 300000 /dev/zero | tr '\\0' 'a'; echo; echo end"), shell('count', 'printf %s "{{steps.big.output}}" | wc -c')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.steps[1]!.output!.trim(), String(300000 + 1 + 4));
});

runs('steps never see Factory secrets or its own variables', async (context) => {
  await context.factory.close();
  process.env.SOME_SECRET_LOOKING = 'trigger-secret-value-123';
  process.env.FACTORY_DATA_DIR = '/should/not/leak';
  try {
    context.factory = await startTestFactory();
    const file = JSON.parse(readFileSync(join(context.factory.dir, 'config.json'), 'utf8'));
    await context.factory.stop();
    file.triggers.push({ id: 'trg_00000000000000ab', name: 'Hook', kind: 'webhook', enabled: true, pipelineId: file.pipelines[0].id, webhookSecret: 'trigger-secret-value-123' });
    (await import('node:fs')).writeFileSync(join(context.factory.dir, 'config.json'), JSON.stringify(file));
    context.factory = await startTestFactory({ dir: context.factory.dir });
    const pipeline = await context.factory.pipeline([shell('env', 'env; echo "x={{vars.leak}}"')]);
    const run = await context.factory.api.startRun({ pipelineId: pipeline.id, variables: { leak: 'trigger-secret-value-123' } });
    const done = await context.factory.waitForRun(run.id, ['succeeded', 'failed']);
    const output = done.steps[0]!.output!;
    assert.not.match(output, /trigger-secret-value-123/);
    assert.not.match(output, /FACTORY_DATA_DIR/);
    assert.match(output, /FACTORY_RUN_ID=run_/);
    assert.match(output, /PATH=/);
  } finally {
    delete process.env.SOME_SECRET_LOOKING;
    delete process.env.FACTORY_DATA_DIR;
  }
});

runs('binary garbage and a 200 KB line do not break the log', async ({ factory }) => {
  // The garbage has no `x`, so the lines of x below are the 200 KB line's pieces alone.
  const pipeline = await factory.pipeline([shell('noise', "head -c 100000 /dev/urandom | tr -d x; echo; head -c 200000 /dev/zero | tr '\\0' 'x'; echo; echo done")]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded');
  const log = await factory.api.readStepLog(run.id, 'noise');
  assert.ok(log.some((line) => line.line === 'done'));
  assert.ok(log.every((line) => !line.line.includes('\0') && line.line.length <= 16384 + 100), 'lines are shown cut');
  assert.ok(log.some((line) => /^x{16384} … \(\d+ more characters: download the log\)$/.test(line.line)));
  // The file keeps every byte: the long line in pieces of at most 128 KiB.
  const file = readFileSync(join(factory.dir, 'runs', run.id, 'logs', 'noise.1.log'), 'latin1').split('\n');
  assert.is(file.filter((line) => /^x+$/.test(line)).reduce((sum, line) => sum + line.length, 0), 200000);
});

runs('a step printing a million lines: every line on disk in order, memory bounded, live events of at most 256 KB with a skip marker', async ({ factory }) => {
  const events = factory.record('logs');
  const pipeline = await factory.pipeline([shell('flood', 'seq 1 1000000')]);
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  await factory.waitForRun(run.id, ['succeeded'], 60_000);
  clearInterval(sampler);
  const lines = readFileSync(join(factory.dir, 'runs', run.id, 'logs', 'flood.1.log'), 'utf8').split('\n').filter((line) => /^\d+$/.test(line));
  assert.is(lines.length, 1_000_000);
  assert.ok(lines.every((line, index) => line === String(index + 1)), 'in order');
  assert.ok(peak - before < 100 * 1024 * 1024, `memory grew ${Math.round((peak - before) / 1024 / 1024)} MB`);
  // The run's status can arrive before the last paced logs event: wait for the step's result line.
  await waitFor(() => events.some((batch) => batch.some((line) => line.stepId === 'flood' && line.line.startsWith('Succeeded in'))), 2000, 'the last logs event');
  const sizes = events.map((batch) => Buffer.byteLength(JSON.stringify(batch)));
  assert.ok(Math.max(...sizes) <= 256 * 1024 + 4096, `the largest logs event is ${Math.max(...sizes)} bytes`);
  const flood = events.flat().filter((line) => line.stepId === 'flood');
  const skipped = flood.reduce((sum, line) => sum + (line.skipped ?? 0), 0);
  assert.ok(skipped > 0 && flood.some((line) => /^… [\d,]+ lines skipped \(full log on disk\)$/.test(line.line)), 'a marker says what the feed skipped');
  assert.is(skipped + flood.filter((line) => line.skipped === undefined).length, 1_000_002, 'every line is either sent or counted (with the command and the result lines)');
  assert.is(flood.at(-1)!.line.startsWith('Succeeded in'), true);
  const numbered = flood.filter((line) => /^\d+$/.test(line.line));
  assert.ok(numbered.length > 0 && numbered.every((line) => line.n === Number(line.line) + 1), 'live lines carry their line numbers (line 1 is the command)');
});

runs('the global cap holds queued runs back, oldest first, and a waiting run frees its slot', async ({ factory }) => {
  await factory.api.saveSettings({ maxParallelRuns: 1 });
  const slow = await factory.pipeline([shell('wait', 'sleep 0.4')], { name: 'Slow' });
  const gate = await factory.pipeline([approval('gate', 'Go?')], { name: 'Gate' });
  const waiting = await factory.api.startRun({ pipelineId: gate.id });
  await factory.waitForRun(waiting.id, ['waiting']);
  const first = await factory.api.startRun({ pipelineId: slow.id });
  const second = await factory.api.startRun({ pipelineId: slow.id });
  await factory.waitForRun(first.id, ['running']);
  assert.is((await factory.api.getRun(second.id))!.status, 'queued');
  const doneFirst = await factory.waitForRun(first.id, ['succeeded']);
  const doneSecond = await factory.waitForRun(second.id, ['succeeded']);
  assert.ok(doneSecond.startedAt! >= doneFirst.finishedAt!, 'the second started after the first finished');
  assert.is((await factory.api.getRun(waiting.id))!.status, 'waiting');
});

runs('the per-pipeline cap limits one pipeline without blocking another', async ({ factory }) => {
  await factory.api.saveSettings({ maxParallelRuns: 4 });
  const capped = await factory.pipeline([shell('wait', 'sleep 0.5')], { name: 'Capped', maxParallelRuns: 1 });
  const free = await factory.pipeline([shell('quick', 'echo hi')], { name: 'Free' });
  const a = await factory.api.startRun({ pipelineId: capped.id });
  const b = await factory.api.startRun({ pipelineId: capped.id });
  const c = await factory.api.startRun({ pipelineId: free.id });
  await factory.waitForRun(c.id, ['succeeded']);
  assert.is((await factory.api.getRun(b.id))!.status, 'queued');
  await factory.waitForRun(a.id, ['succeeded']);
  await factory.waitForRun(b.id, ['succeeded']);
});

runs('cancelling a running step stops its whole process tree', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('spawn', 'sleep 300 & echo "pid $!"; sleep 300 & echo "pid $!"; wait')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  let pids: number[] = [];
  await waitFor(async () => {
    const log = await factory.api.readStepLog(run.id, 'spawn').catch(() => [] as LogLine[]);
    pids = log.map((line) => /^pid (\d+)$/.exec(line.line)?.[1]).filter(Boolean).map(Number);
    return pids.length === 2;
  }, 5000, 'the background pids');
  await factory.api.cancelRun(run.id);
  const done = await factory.api.getRun(run.id);
  assert.is(done!.status, 'cancelled');
  assert.is(done!.steps[0]!.status, 'cancelled');
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await waitFor(() => pids.every((pid) => !alive(pid)), 2000, 'the grandchildren to be gone');
  await rejects(factory.api.cancelRun(run.id), /already cancelled/);
});

runs('cancelling a queued or waiting run finishes it at once', async ({ factory }) => {
  await factory.api.saveSettings({ maxParallelRuns: 1 });
  const gate = await factory.pipeline([approval('gate', 'Go?'), shell('after', 'echo no')]);
  const slow = await factory.pipeline([shell('wait', 'sleep 2')], { name: 'Slow' });
  const waiting = await factory.api.startRun({ pipelineId: gate.id });
  await factory.waitForRun(waiting.id, ['waiting']);
  const busy = await factory.api.startRun({ pipelineId: slow.id });
  const queued = await factory.api.startRun({ pipelineId: slow.id });
  await factory.api.cancelRun(queued.id);
  await factory.api.cancelRun(waiting.id);
  const cancelledWaiting = (await factory.api.getRun(waiting.id))!;
  assert.is(cancelledWaiting.status, 'cancelled');
  assert.equal(cancelledWaiting.steps.map((step) => step.status), ['cancelled', 'skipped']);
  assert.is((await factory.api.getRun(queued.id))!.status, 'cancelled');
  await factory.api.cancelRun(busy.id);
});

runs('retry from a step keeps earlier results and counts attempts on', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('one', 'echo first; date +%s%N'), shell('two', 'test -f ok || { touch ok; exit 1; }; echo fixed')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const failed = await factory.waitForRun(run.id, ['failed']);
  await rejects(factory.api.retryRun(run.id, 'zzz'), /has no step `zzz`/);
  const retried = await factory.api.retryRun(run.id, 'two');
  assert.is(retried.status, 'queued');
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded');
  assert.is(done.steps[0]!.output, failed.steps[0]!.output, 'the first step was not run again');
  assert.is(done.steps[0]!.attempt, 1);
  assert.is(done.steps[1]!.attempt, 2);
  assert.equal((await factory.api.readStepLog(run.id, 'two', 1)).some((line) => /Exited with code 1/.test(line.line)), true);
  const again = await factory.api.retryRun(run.id);
  assert.equal(again.steps.map((step) => step.status), ['pending', 'pending']);
  const final = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.equal(final.steps.map((step) => step.attempt), [2, 3]);
  assert.is.not(final.steps[0]!.output, failed.steps[0]!.output);
});

runs('retry and delete refuse runs that are not finished; delete removes files and tells listeners', async ({ factory }) => {
  const gate = await factory.pipeline([approval('gate', 'Go?')]);
  const run = await factory.api.startRun({ pipelineId: gate.id });
  await factory.waitForRun(run.id, ['waiting']);
  await rejects(factory.api.retryRun(run.id), /is waiting; only a finished run can be retried/);
  await rejects(factory.api.deleteRun(run.id), /cancel it before deleting it/);
  await factory.api.cancelRun(run.id);
  const deleted = factory.record('run-deleted');
  await factory.api.deleteRun(run.id);
  assert.equal(deleted, [run.id]);
  assert.not.ok(existsSync(join(factory.dir, 'runs', run.id)));
  assert.is(await factory.api.getRun(run.id), undefined);
  await rejects(factory.api.deleteRun(run.id), /No run with id/);
  await rejects(factory.api.deleteRun({ id: 1 } as never), /run id/);
});

runs('listRuns filters by status, pipeline and search, newest first, without outputs', async ({ factory }) => {
  const alpha = await factory.pipeline([shell('a', 'echo alpha')], { name: 'Alpha' });
  const beta = await factory.pipeline([shell('b', 'exit 1')], { name: 'Beta' });
  const one = await factory.api.startRun({ pipelineId: alpha.id, issue: { title: 'Add dark mode', key: 'UI-1' } });
  const two = await factory.api.startRun({ pipelineId: beta.id, issue: { title: 'Crash on save', key: 'BUG-9' } });
  await factory.waitForRun(one.id, ['succeeded']);
  await factory.waitForRun(two.id, ['failed']);
  const all = await factory.api.listRuns();
  assert.equal(all.map((run) => run.id), [two.id, one.id]);
  assert.ok(all.every((run) => run.pipeline === undefined && run.steps.every((step) => step.output === undefined)));
  assert.equal((await factory.api.listRuns({ status: 'failed' })).map((run) => run.id), [two.id]);
  assert.equal((await factory.api.listRuns({ pipelineId: alpha.id })).map((run) => run.id), [one.id]);
  assert.equal((await factory.api.listRuns({ search: 'bug-9' })).map((run) => run.id), [two.id]);
  assert.equal((await factory.api.listRuns({ search: 'alpha' })).map((run) => run.id), [one.id]);
  assert.equal((await factory.api.listRuns({ limit: 1 })).length, 1);
  await rejects(factory.api.listRuns({ status: 'done' } as never), /^The status must be one of queued/m);
  await rejects(factory.api.listRuns({ limit: -1 }), /limit/);
  const full = await factory.api.getRun(one.id);
  assert.is(full!.steps[0]!.output, 'alpha\n');
  assert.is(full!.pipeline!.name, 'Alpha');
  assert.equal((await factory.api.snapshot()).runs.map((run) => run.id), [two.id, one.id]);
});

runs('run events are coalesced and end with the final state; log events keep order', async ({ factory }) => {
  const runEvents = factory.record('run');
  const logEvents = factory.record('logs');
  const pipeline = await factory.pipeline([shell('count', 'for i in $(seq 1 500); do echo "line $i"; done')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  await factory.waitForRun(run.id, ['succeeded']);
  await waitFor(() => runEvents.at(-1)?.status === 'succeeded', 2000, 'the final run event');
  const mine = runEvents.filter((event) => event.id === run.id);
  assert.ok(mine.length >= 1 && mine.length < 20, `${mine.length} run events`);
  assert.is(mine.at(-1)!.status, 'succeeded');
  assert.ok(mine.every((event) => event.steps.every((step) => step.output === undefined)));
  await waitFor(() => logEvents.flat().filter((line) => /^line \d+$/.test(line.line)).length === 500, 2000, 'all log lines as events');
  const numbers = logEvents.flat().filter((line) => /^line \d+$/.test(line.line)).map((line) => Number(line.line.slice(5)));
  assert.equal(numbers, Array.from({ length: 500 }, (_, index) => index + 1));
  assert.ok(logEvents.length < 500, `${logEvents.length} log events for 500 lines`);
});

runs('the setup command runs first and its output is the run log; a failing setup fails the run', async ({ factory }) => {
  const snapshot = await factory.api.snapshot();
  const project = snapshot.projects[0]!;
  await factory.api.saveProject({ ...project, setupCommand: 'echo preparing; echo "in $(pwd)"' });
  const pipeline = await factory.pipeline([shell('x', 'echo x')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  await factory.waitForRun(run.id, ['succeeded']);
  const setup = await factory.api.readRunLog(run.id);
  assert.ok(setup.some((line) => line.line === 'preparing' && line.stepId === '' && line.attempt === 0));
  await factory.api.saveProject({ ...project, setupCommand: 'echo "no deps" >&2; exit 4' });
  const broken = await factory.api.startRun({ pipelineId: pipeline.id });
  const failed = await factory.waitForRun(broken.id, ['failed']);
  assert.match(failed.error!, /^Setup failed: .*exit 4.*no deps/);
  assert.is(failed.steps[0]!.status, 'skipped');
});

runs('a worktree project gives each run its own git worktree, removed with the run (its work kept on its branch)', async ({ factory }) => {
  const repo = join(factory.dir, 'repo');
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } }).toString();
  mkdirSync(repo);
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README'), 'hello from the repo\n');
  git('add', 'README');
  git('commit', '-q', '-m', 'first');
  const project = await factory.api.saveProject({ name: 'Repo', path: repo, worktrees: true });
  const pipeline = await factory.api.savePipeline({ projectId: project.id, name: 'In worktree', variables: {}, steps: [shell('look', 'cat README; git branch --show-current; pwd; touch made-here')] });
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.workspace, join(factory.dir, 'worktrees', run.id));
  assert.is(done.steps[0]!.output, `hello from the repo\nfactory/${run.id}\n${done.workspace}\n`);
  assert.not.ok(existsSync(join(repo, 'made-here')), 'the project folder itself is untouched');
  assert.ok((await factory.api.readRunLog(run.id)).some((line) => /git worktree add/.test(line.line)));
  assert.is(await factory.api.deleteRun(run.id), `uncommitted work committed; kept branch factory/${run.id} (1 commit not merged anywhere)`);
  assert.not.ok(existsSync(done.workspace!));
  assert.match(git('branch', '--list'), new RegExp(`factory/${run.id}`), 'the file the step made is on the kept branch');
});

runs.run();
