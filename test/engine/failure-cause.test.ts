// A failed step names its cause (StepRun.cause): the engine reads the attempt's log back and keeps
// the line most likely to say why (core/failure-cause.ts), with its number in that log. Real shell
// processes, real files.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';

const causes = suite<{ factory: TestFactory }>('failure cause (engine)');

causes.before.each(async (context) => {
  context.factory = await startTestFactory();
});
causes.after.each(async (context) => {
  await context.factory.close();
});

/** What npm prints when the folder has no package.json (npm 10), without needing npm. */
const npmMissingPackage = [
  'npm error code ENOENT',
  'npm error syscall open',
  'npm error path /work/demo/package.json',
  'npm error errno -2',
  'npm error enoent Could not read package.json: Error: ENOENT: no such file or directory',
  'npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log',
].map((line) => `echo '${line}' >&2`).join('\n');

causes('a failed shell step names the line that says why, numbered as its log is, and the line is that line of the log', async ({ factory }) => {
  const pipeline = await factory.pipeline([shell('test', `echo building\n${npmMissingPackage}\nexit 254`)]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['failed']);
  const step = done.steps[0]!;
  assert.match(step.error!, /^Exited with code 254: npm error A complete log/, 'the error quotes the last stderr line');
  assert.ok(step.cause, 'a cause is recorded');
  assert.is(step.cause!.text, 'npm error enoent Could not read package.json: Error: ENOENT: no such file or directory');
  const log = await factory.api.readStepLog(run.id, 'test', 1);
  assert.is(log.find((line) => line.n === step.cause!.line)?.line, step.cause!.text, 'the cause is that line of the log');
  // The slim run of the snapshot carries it too (a phone or a tracker comment can say it).
  const slim = (await factory.api.snapshot()).runs.find((candidate) => candidate.id === run.id)!;
  assert.equal(slim.steps[0]!.cause, step.cause);
});

causes('a step that fails without an error-looking line has no cause; a retry that succeeds forgets the cause of the failed attempt', async ({ factory }) => {
  const quiet = await factory.pipeline([shell('quiet', 'echo done; exit 1')]);
  const first = await factory.waitForRun((await factory.api.startRun({ pipelineId: quiet.id })).id, ['failed']);
  assert.is(first.steps[0]!.cause, undefined);

  const flaky = await factory.pipeline([shell('flaky', 'if [ -e tried ]; then echo fine; else touch tried; echo "fatal: first try" >&2; exit 1; fi', { retries: 1 })]);
  const run = await factory.api.startRun({ pipelineId: flaky.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.steps[0]!.attempt, 2);
  assert.is(done.steps[0]!.cause, undefined);
});

causes.run();
