// Liveness in words (issue 24.4): working → quiet → stalled with an injected clock, reported only
// when the word changes; what a stall does (onStall notify, cancel, retry with attempt counts)
// through the engine with the fake CLIs; and cost where people look (issue 24.5): the run's usage
// is every step's added up, in getRun and listRuns.
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AgentStep, Run, StepLiveness } from '../../src/core/api';
import { LivenessTracker, livenessAt, quietAfterMs, type LivenessReport } from '../../src/engine/liveness';
import { totalUsage } from '../../src/engine/rate-limit-waits';
import { AgentWatch } from '../../src/harness/agent-watch';
import { commentMarkdown } from '../../src/triggers/comment-text';
import { clockInWords } from '../../src/triggers/liveness-words';
import { runComment } from '../../src/triggers/write-back';
import { startTestFactory, type TestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const fakes = resolve('test/fakes/bin');
process.env.PATH = `${fakes}:${process.env.PATH}`;

const agent = (id: string, extra: Partial<AgentStep> = {}): AgentStep => ({ id, name: id, kind: 'agent', prompt: `Work on ${id}`, harnessId: 'claude', ...extra });

// ─── The words, on an injected clock ───

const words = suite('liveness words');

words('working for a minute after output, then quiet, then stalled at stallSec; output makes it working again', () => {
  let now = 1_000_000;
  const reports: LivenessReport[] = [];
  const tracker = new LivenessTracker({ now: () => now, stallMs: 600_000, report: (report) => reports.push(report) });
  assert.equal(reports, [{ liveness: 'working', since: 1_000_000 }]);
  now += quietAfterMs - 1;
  assert.is(tracker.check(), 'working');
  now += 1;
  assert.is(tracker.check(), 'quiet');
  now += 600_000 - quietAfterMs - 1;
  assert.is(tracker.check(), 'quiet');
  now += 1;
  assert.is(tracker.check(), 'stalled');
  now += 5000;
  tracker.output();
  tracker.output();
  assert.is(tracker.check(), 'working');
  assert.equal(reports.map((report) => report.liveness), ['working', 'quiet', 'stalled', 'working'], 'one report per change, none per line');
  assert.equal(reports.slice(1, 3).map((report) => report.since), [1_000_000, 1_000_000], 'quiet and stalled count from the last output');
});

words('a stall time under a minute goes from working straight to stalled', () => {
  assert.is(livenessAt(0, 29_999, 30_000), 'working');
  assert.is(livenessAt(0, 30_000, 30_000), 'stalled');
  assert.is(livenessAt(0, 59_999, 600_000), 'working');
  assert.is(livenessAt(0, 60_000, 600_000), 'quiet');
});

words('a stall with onStall cancel aborts the process once and settles as cancelled in words; notify only tells', () => {
  for (const onStall of ['notify', 'cancel', 'retry'] as const) {
    let now = 0;
    const recorded: StepLiveness[] = [];
    const notices: string[] = [];
    const watch = new AgentWatch({
      step: agent('work', { onStall }), stallMs: 10_000, timeoutMs: 3600_000, harnessName: 'Claude Code', now: () => now,
      record: ({ liveness }) => recorded.push(liveness), log: () => undefined, stalled: (message) => notices.push(message), lastErrorSuffix: () => '',
    });
    try {
      now = 10_000;
      watch.check();
      watch.check();
      assert.equal(recorded, ['working', 'stalled'], onStall);
      assert.is(notices.length, 1, 'one notice per stall');
      assert.is(watch.signal.aborted, onStall !== 'notify', onStall);
      const killed = { status: 'failed' as const, output: 'half', error: 'Claude Code failed: killed by SIGTERM' };
      const settled = watch.settle(killed, false, false);
      if (onStall === 'notify') assert.equal(settled, killed);
      else if (onStall === 'cancel') assert.equal(settled, { status: 'cancelled', error: 'No output for 10.0 s: the agent may be stuck; the step is cancelled (onStall: cancel)' });
      else assert.equal(settled, { status: 'failed', output: 'half', error: 'No output for 10.0 s: the agent may be stuck; the agent is stopped to try the step again (onStall: retry)' });
      // A person's cancel while it stalled stays a cancel.
      if (onStall !== 'notify') assert.equal(watch.settle({ status: 'cancelled' }, true, false), { status: 'cancelled' });
    } finally {
      watch.stop();
    }
  }
});

words('the tracker comment says the liveness with its time, and at the end what was used in all and by each step', () => {
  const now = Date.UTC(2026, 2, 10, 9, 30);
  const base: Run = { id: 'run_1', pipelineId: 'p', pipelineName: 'Feature', projectId: 'pr', variables: {}, status: 'running', createdAt: now - 600_000, startedAt: now - 600_000, steps: [] };
  const quiet = runComment({ ...base, steps: [{ id: 'code', name: 'Code', kind: 'agent', status: 'running', attempt: 1, liveness: 'stalled', livenessSince: now - 12 * 60_000 }] }, undefined, [], undefined, now);
  assert.match(commentMarkdown(quiet), /Status: ◔ running \(step 1 of 1: ` Code `, stalled: no output for 12 min\)/, commentMarkdown(quiet));
  const limited = runComment({ ...base, status: 'waiting', steps: [{ id: 'code', name: 'Code', kind: 'agent', status: 'waiting', attempt: 1, liveness: 'rateLimited', resumeAt: now + 35 * 60_000, livenessSince: now }] }, undefined, [], undefined, now);
  assert.ok(commentMarkdown(limited).includes(`at \` Code \`: rate limited, resumes ${clockInWords(now + 35 * 60_000, now)}`), commentMarkdown(limited));
  assert.is(clockInWords(now + 35 * 60_000, now, 'UTC'), '10:05 UTC');
  assert.is(clockInWords(now + 24 * 3600_000, now, 'UTC'), '11 Mar, 09:30 UTC');
  const done = runComment({ ...base, status: 'succeeded', finishedAt: now, usage: { inputTokens: 40_000, outputTokens: 1200, costUsd: 0.62 }, steps: [
    { id: 'plan', name: 'Plan', kind: 'agent', status: 'succeeded', attempt: 1, usage: { inputTokens: 10_000, outputTokens: 200, costUsd: 0.12 } },
    { id: 'code', name: 'Code', kind: 'agent', status: 'succeeded', attempt: 1, usage: { inputTokens: 30_000, outputTokens: 1000, costUsd: 0.5 } },
  ] }, undefined, [], undefined, now);
  assert.ok(commentMarkdown(done).includes('Used 41k tokens · $0.62 (` Plan ` 10k tokens · $0.12; ` Code ` 31k tokens · $0.50)'), commentMarkdown(done));
});

// ─── Through the engine ───

const engine = suite<{ factory: TestFactory; dir: string }>('stalls and cost in runs');

/**
 * The engine's clock running 20 times faster than the real one: a stall time of 10 s (the least a
 * pipeline takes) passes in half a second; the silence is looked at every 2.5 s of real time.
 */
function fastClock(): () => number {
  const start = Date.now();
  return () => start + (Date.now() - start) * 20;
}

engine.before.each(async (context) => {
  context.dir = makeTempDir('factory-liveness');
  context.factory = await startTestFactory({ now: fastClock() });
});
engine.after.each(async (context) => {
  await context.factory.close();
  removeTempDir(context.dir);
});

async function useEnv(factory: TestFactory, env: Record<string, string>): Promise<void> {
  const harness = (await factory.api.snapshot()).harnesses.find((candidate) => candidate.id === 'claude')!;
  await factory.api.saveHarness({ ...harness, env });
}

/** The liveness words a run's events showed for its first step, in order, without repeats. */
function livenessSeen(factory: TestFactory, runId: string): (StepLiveness | undefined)[] {
  const seen: (StepLiveness | undefined)[] = [];
  factory.api.on('run', (run: Run) => {
    if (run.id !== runId) return;
    const word = run.steps[0]?.liveness;
    if (seen.at(-1) !== word) seen.push(word);
  });
  return seen;
}

engine('onStall notify: a notice and the word stalled, then working, and the step finishes; liveness is cleared at the end', async ({ factory }) => {
  await useEnv(factory, { FAKE_MODE: 'silent', FAKE_SILENT_MS: '3500' });
  const pipeline = await factory.pipeline([agent('think', { stallSec: 10 })]);
  const events: string[] = [];
  factory.runs.onLifecycle((event) => events.push(event.type));
  const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
  const seen = livenessSeen(factory, id);
  const done = await factory.waitForRun(id, ['succeeded', 'failed', 'cancelled'], 30_000);
  assert.is(done.status, 'succeeded', done.error);
  assert.ok(seen.includes('stalled'), `seen: ${seen.join(', ')}`);
  assert.is(done.steps[0]!.liveness, undefined);
  assert.is(done.steps[0]!.livenessSince, undefined);
  assert.is(events.filter((type) => type === 'step-liveness').length, 2, 'stalled and back: the tracker comment is told twice');
  const inbox = (await factory.api.snapshot()).inbox.filter((item) => item.kind === 'step.stalled' && item.runId === id);
  assert.is(inbox.length, 1);
  assert.match(inbox[0]!.body ?? '', /may be stuck; it is stopped after its timeout of/);
});

engine('onStall cancel: the stalled agent is stopped and the step cancelled in words, after one attempt', async ({ factory }) => {
  await useEnv(factory, { FAKE_MODE: 'silent', FAKE_SILENT_MS: '60000' });
  const pipeline = await factory.pipeline([agent('think', { stallSec: 10, onStall: 'cancel', retries: 2 })]);
  const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(id, ['succeeded', 'failed', 'cancelled'], 30_000);
  assert.is(done.status, 'cancelled');
  assert.is(done.steps[0]!.status, 'cancelled');
  assert.is(done.steps[0]!.attempt, 1, 'a cancel is not retried');
  assert.match(done.steps[0]!.error!, /^No output for .+: the agent may be stuck; the step is cancelled \(onStall: cancel\)$/);
});

engine('onStall retry: the stalled attempt is stopped and counts; the next attempt succeeds (one retry when none is set)', async ({ factory, dir }) => {
  await useEnv(factory, { FAKE_MODE: 'silent', FAKE_SILENT_MS: '60000', FAKE_SILENT_STATE: join(dir, 'count'), FAKE_SILENT_TIMES: '1' });
  const pipeline = await factory.pipeline([agent('think', { stallSec: 10, onStall: 'retry' })]);
  const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(id, ['succeeded', 'failed', 'cancelled'], 30_000);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.steps[0]!.attempt, 2);
  const first = (await factory.api.readStepLog(id, 'think', 1)).map((line) => line.line);
  assert.ok(first.some((line) => /the agent is stopped to try the step again \(onStall: retry\)/.test(line)), first.join('\n'));
  assert.ok(first.some((line) => /^Attempt 1 failed; trying again \(2 of 2\)$/.test(line)));

  // Stalling every time: the retries run out and the step fails in the stall's words.
  await useEnv(factory, { FAKE_MODE: 'silent', FAKE_SILENT_MS: '60000' });
  const always = await factory.pipeline([agent('think', { stallSec: 10, onStall: 'retry', retries: 1 })], { name: 'Always stalls' });
  const second = await factory.api.startRun({ pipelineId: always.id });
  const failed = await factory.waitForRun(second.id, ['succeeded', 'failed', 'cancelled'], 30_000);
  assert.is(failed.status, 'failed');
  assert.is(failed.steps[0]!.attempt, 2);
  assert.match(failed.steps[0]!.error!, /onStall: retry/);
});

engine('a pipeline keeps onStall and refuses any other stall action, naming the field', async ({ factory }) => {
  const saved = await factory.pipeline([agent('think', { onStall: 'retry' })]);
  assert.is((saved.steps[0] as AgentStep).onStall, 'retry');
  await factory.pipeline([agent('think', { onStall: 'explode' as 'retry' })]).then(
    () => assert.unreachable('saved'),
    (error: Error) => assert.match(error.message, /^Step 1: the stall action must be notify, cancel or retry, not `explode`/, error.message),
  );
});

engine('the run\'s usage is its steps\' added up, in getRun and listRuns', async ({ factory }) => {
  await useEnv(factory, {});
  const pipeline = await factory.pipeline([agent('one'), agent('two')]);
  const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  const [one, two] = done.steps;
  assert.equal(done.usage, totalUsage([one!, two!]));
  assert.is(done.usage!.costUsd, one!.usage!.costUsd! + two!.usage!.costUsd!);
  assert.is(done.usage!.outputTokens, one!.usage!.outputTokens! + two!.usage!.outputTokens!);
  await waitFor(async () => (await factory.api.listRuns())[0]?.usage?.costUsd === done.usage!.costUsd, 5000, 'listRuns to carry the total');
  assert.equal(totalUsage([{ id: 'a', name: 'a', kind: 'shell', status: 'succeeded', attempt: 1 }]), undefined, 'no usage reported: none');
  assert.equal(totalUsage([{ id: 'a', name: 'a', kind: 'agent', status: 'succeeded', attempt: 1, usage: { outputTokens: 3 } }, { id: 'b', name: 'b', kind: 'agent', status: 'succeeded', attempt: 1, usage: { costUsd: 0.5 } }]), { outputTokens: 3, costUsd: 0.5 });
});

words.run();
engine.run();
