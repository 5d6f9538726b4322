// Budgets (issue 24.1, 24.2, 24.6): caps enforced from the usage a CLI reports as it runs, the pause
// for a decision at a cap (the CLI asked to stop with SIGINT, its work left in place), approving
// (the cap raised, the session resumed) and rejecting (the step fails in words), the pause surviving
// kill -9, the daily spend limit across runs, and caps refused or warned about at save. The fake
// CLIs (test/fakes/bin, FAKE_MODE=spend) print real usage lines over time and record their
// arguments and the signals they receive; tests wait on those files and on run states, never sleep.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AgentStep, HarnessDefinition, Run, Step } from '../../src/core/api';
import { budgetContinuationPrompt, priceOf, readBudget } from '../../src/core/budget';
import { BudgetKeeper } from '../../src/engine/budget';
import { runProcess } from '../../src/engine/process';
import { createParser } from '../../src/harness/parsers/index';
import { SpendFile, localDay } from '../../src/store/spend-file';
import { rejects } from '../helpers/assert';
import { startChildFactory, type ChildFactory } from '../helpers/child-factory';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const fakes = resolve('test/fakes/bin');
process.env.PATH = `${fakes}:${process.env.PATH}`;
const childPath = new URL('./factory.child.mjs', import.meta.url).pathname;

/** An agent step on the fake Claude Code. */
function agent(id: string, extra: Partial<AgentStep> = {}): Step {
  return { id, name: id, kind: 'agent', prompt: 'Spend some tokens', harnessId: 'claude', ...extra } as Step;
}

/** The fake CLI's environment for one test: spend mode, and files for its arguments and signals. */
function fakeEnvironment(dir: string, extra: Record<string, string> = {}): { args: string; signals: string; restore(): void } {
  const values: Record<string, string> = {
    FAKE_MODE: 'spend', FAKE_SPEND_TOKENS: '1000', FAKE_SPEND_TURNS: '400', FAKE_SPEND_MS: '10', FAKE_SPEND_RESUMED_TURNS: '2',
    FAKE_ARGS_FILE: join(dir, 'args.jsonl'), FAKE_SIGNALS_FILE: join(dir, 'signals.txt'), ...extra,
  };
  const before = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  return {
    args: values.FAKE_ARGS_FILE!,
    signals: values.FAKE_SIGNALS_FILE!,
    restore() {
      for (const [name, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    },
  };
}

function invocations(file: string): { argv: string[]; prompt: string }[] {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line)) : [];
}

function signalsSeen(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
}

// ─── Live usage and prices ───

const accounting = suite('budget accounting');

accounting('Claude Code: assistant usage counts as it comes, a message once, and the result replaces it', () => {
  const parser = createParser('claude-stream-json');
  const assistant = (id: string, input: number, output: number) => JSON.stringify({ type: 'assistant', session_id: 's', message: { id, role: 'assistant', content: [{ type: 'text', text: 'x' }], usage: { input_tokens: input, cache_read_input_tokens: 100, output_tokens: output } } });
  parser.push(assistant('msg_1', 10, 5));
  assert.equal(parser.usageSoFar!(), { inputTokens: 110, outputTokens: 5 });
  parser.push(assistant('msg_1', 10, 7)); // the same message again, later figures
  assert.equal(parser.usageSoFar!(), { inputTokens: 110, outputTokens: 7 });
  parser.push(assistant('msg_2', 20, 3));
  assert.equal(parser.usageSoFar!(), { inputTokens: 230, outputTokens: 10 });
  parser.push(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok', session_id: 's', total_cost_usd: 0.5, usage: { input_tokens: 300, output_tokens: 12 } }));
  assert.equal(parser.usageSoFar!(), { inputTokens: 300, outputTokens: 12, costUsd: 0.5 });
});

accounting('Codex: each turn.completed adds its usage at once', () => {
  const parser = createParser('codex-json');
  parser.push(JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 0, output_tokens: 20 } }));
  parser.push(JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 50, cached_input_tokens: 0, output_tokens: 5 } }));
  assert.equal(parser.usageSoFar!(), { inputTokens: 150, outputTokens: 25 });
});

accounting('prices: the longest name a model contains; the harness\'s own first; the CLI\'s default model', () => {
  const claude = { output: 'claude-stream-json' };
  assert.equal(priceOf('claude-sonnet-5-5-20260601', claude), { inputPerMTok: 2, outputPerMTok: 10 });
  assert.equal(priceOf('', claude), { inputPerMTok: 2, outputPerMTok: 10 }, 'sonnet when no model is named');
  assert.equal(priceOf('gpt-5-mini', { output: 'codex-json' }), { inputPerMTok: 0.25, outputPerMTok: 2 });
  assert.equal(priceOf('gpt-5-mini', { output: 'codex-json', prices: { 'gpt-5-mini': { inputPerMTok: 9, outputPerMTok: 9 } } }), { inputPerMTok: 9, outputPerMTok: 9 });
  assert.is(priceOf('llama-70b', { output: 'opencode-json' }), undefined);
});

accounting('minutes by the clock: the meter stops at the cap with no output at all', () => {
  let now = Date.UTC(2026, 10, 27, 12);
  const keeper = new BudgetKeeper({ spend: SpendFile.inMemory(), dailyLimit: () => undefined, now: () => now });
  const run = { id: 'run_1', steps: [{ id: 'work', name: 'work', kind: 'agent', status: 'running', attempt: 1 }], pipeline: { steps: [agent('work', { budget: { maxMinutes: 30 } })] } } as unknown as Run;
  const lines: string[] = [];
  const watch = keeper.watch(run, run.steps[0]!, (line) => lines.push(line));
  let stops = 0;
  const meter = watch.meter({ name: 'Claude Code', output: 'claude-stream-json' }, '', () => stops++);
  now += 23 * 60_000;
  meter.see(undefined);
  assert.equal(lines, [], 'no notice below 80%');
  now += 2 * 60_000;
  meter.see(undefined);
  assert.is(stops, 0);
  assert.equal(lines, ["Budget: 83% used: 25 minutes of 30 minutes, this step's cap; at the cap the agent is stopped and the step waits for a decision"]);
  now += 6 * 60_000;
  meter.see(undefined);
  assert.is(stops, 1);
  const pause = meter.end(undefined, 'Editing src/app.ts')!;
  assert.is(pause.budgetStop.limit, 'minutes');
  assert.match(pause.message, /^Ran 31 of 30 minutes, this step's cap\. The agent was last: “Editing src\/app\.ts”\. Approve to go on with 30 minutes more/);
});

accounting('an interrupt sends SIGINT first, and SIGTERM only when the process is still there after the grace', async () => {
  const folder = makeTempDir('factory-interrupt');
  try {
    const signals = join(folder, 'signals.txt');
    const started = join(folder, 'started');
    // Ignores SIGINT (records it), as a CLI busy in a tool call might; SIGTERM ends it.
    const script = `const fs = require('fs'); process.on('SIGINT', () => fs.appendFileSync(process.env.SIGNALS, 'SIGINT\\n')); process.on('SIGTERM', () => { fs.appendFileSync(process.env.SIGNALS, 'SIGTERM\\n'); process.exit(143); }); fs.writeFileSync(process.env.STARTED, ''); setInterval(() => {}, 1000);`;
    const interrupt = new AbortController();
    const finished = runProcess({ command: process.execPath, args: ['-e', script], cwd: folder, env: { SIGNALS: signals, STARTED: started }, interrupt: interrupt.signal, interruptGraceMs: 100, useCgroup: false });
    await waitFor(() => existsSync(started), 5000, 'the process to start');
    interrupt.abort();
    const result = await finished;
    assert.equal(signalsSeen(signals), ['SIGINT', 'SIGTERM']);
    assert.is(result.cancelled, false);
    assert.is(result.exitCode, 143);
  } finally {
    removeTempDir(folder);
  }
});

accounting('a continuation resumes with a short prompt, or starts afresh with the last output', () => {
  assert.match(budgetContinuationPrompt('Fix it', true), /continue the task where you stopped/);
  const fresh = budgetContinuationPrompt('Fix it', false, 'Edited two files');
  assert.ok(fresh.startsWith('Fix it') && fresh.includes('Edited two files'));
});

accounting('the daily spend is kept per local calendar day', async () => {
  const spend = SpendFile.inMemory();
  const noon = new Date(2026, 10, 27, 12).getTime();
  spend.add(1.25, noon);
  spend.add(-0.25, noon);
  assert.is(spend.spentOn(noon), 1);
  assert.is(spend.spentOn(new Date(2026, 10, 28, 0, 1).getTime()), 0, 'a new local day starts at 0');
  assert.is(localDay(noon), '2026-11-27');
});

// ─── Pausing at a cap ───

const pausing = suite('budget pause');
let factory: TestFactory;
let dir: string;
pausing.before.each(async () => {
  dir = makeTempDir('factory-budget');
  factory = await startTestFactory();
});
pausing.after.each(async () => {
  await factory.close();
  removeTempDir(dir);
});

pausing('a token cap stops the agent with SIGINT; the run waits with the spend in words; approving resumes the session with the cap raised', async () => {
  // Turns 25 ms apart and one turn after resuming: the agent may print up to four turns past the cap
  // before SIGINT lands on a loaded machine, and the raised cap (10,000) still holds the resumed turn.
  const fake = fakeEnvironment(dir, { FAKE_SPEND_MS: '25', FAKE_SPEND_RESUMED_TURNS: '1' });
  try {
    const inbox = factory.record('inbox');
    const pipeline = await factory.pipeline([agent('work', { budget: { maxTokens: 5000 } })]);
    const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
    const waiting = await factory.waitForRun(id, ['waiting', 'failed', 'succeeded']);
    assert.is(waiting.status, 'waiting');
    const step = waiting.steps[0]!;
    assert.is(step.status, 'waiting');
    assert.is(step.budgetStop?.limit, 'tokens');
    assert.is(step.budgetStop?.allowed, 5000);
    assert.ok(step.budgetStop!.spent >= 5000);
    assert.match(step.message!, /^Spent \d+,\d{3} of 5,000 tokens \(\$0\.\d\d\), this step's cap\. The agent was last: “Working on part \d+”\. Approve to go on with 5,000 tokens more, or reject to fail the step\.$/, step.message);
    await waitFor(() => signalsSeen(fake.signals).includes('SIGINT'), 5000, 'the fake CLI to receive SIGINT');
    assert.ok(existsSync(join(waiting.workspace!, 'agent-was-here.txt')), 'the work stays in the workspace');
    await waitFor(() => inbox.some((item) => item.kind === 'run.waiting'), 5000, 'the pause in the inbox');
    assert.ok(inbox.some((item) => item.kind === 'run.waiting' && item.title === 'Budget reached: work'));
    assert.ok(inbox.some((item) => item.kind === 'step.budget' && /Budget: \d+% used: [\d,]+ tokens of 5,000 tokens/.test(item.body ?? '')));
    assert.not.ok('budgetLedger' in step, 'the ledger stays in run.json');

    const sessionId = step.sessionId!;
    assert.ok(sessionId);
    await factory.api.approveStep(id, 'work', true);
    const done = await factory.waitForRun(id, ['succeeded', 'failed', 'waiting']);
    assert.is(done.status, 'succeeded', done.steps[0]!.message ?? done.error);
    const runs = invocations(fake.args);
    assert.is(runs.length, 2);
    assert.not.ok(runs[0]!.argv.includes('--resume'));
    const resumed = runs[1]!.argv;
    assert.equal(resumed.slice(resumed.indexOf('--resume'), resumed.indexOf('--resume') + 2), ['--resume', sessionId]);
    assert.match(runs[1]!.prompt, /paused at a budget limit/);
  } finally {
    fake.restore();
  }
});

pausing('rejecting fails the step with the budget in words; with continueOnError the run goes on', async () => {
  const fake = fakeEnvironment(dir);
  try {
    const strict = await factory.pipeline([agent('work', { budget: { maxTokens: 3000 } }), shell('after', 'echo after')]);
    const first = await factory.api.startRun({ pipelineId: strict.id });
    await factory.waitForRun(first.id, ['waiting']);
    await factory.api.approveStep(first.id, 'work', false);
    const failed = await factory.waitForRun(first.id, ['failed', 'succeeded']);
    assert.is(failed.status, 'failed');
    assert.match(failed.steps[0]!.error!, /^Stopped at its budget: spent \d+,\d{3} of 3,000 tokens \(\$0\.\d\d\), this step's cap\.$/);
    assert.match(failed.error!, /Step `work` failed: Stopped at its budget/);
    assert.is(failed.steps[1]!.status, 'skipped');
    await rejects(factory.api.approveStep(first.id, 'work', true), /not waiting/);

    const lenient = await factory.pipeline([agent('work', { budget: { maxTokens: 3000 }, continueOnError: true }), shell('after', 'echo after')]);
    const second = await factory.api.startRun({ pipelineId: lenient.id });
    await factory.waitForRun(second.id, ['waiting']);
    await factory.api.approveStep(second.id, 'work', false);
    const goneOn = await factory.waitForRun(second.id, ['failed', 'succeeded']);
    assert.is(goneOn.status, 'succeeded');
    assert.equal(goneOn.steps.map((step) => step.status), ['failed', 'succeeded']);
  } finally {
    fake.restore();
  }
});

pausing('the run\'s cap counts every agent step together', async () => {
  const fake = fakeEnvironment(dir, { FAKE_SPEND_TURNS: '3' });
  try {
    const pipeline = await factory.pipeline([agent('one'), agent('two')], { budget: { maxTokens: 4000 } });
    const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
    const waiting = await factory.waitForRun(id, ['waiting', 'succeeded', 'failed']);
    assert.is(waiting.status, 'waiting');
    assert.equal(waiting.steps.map((step) => step.status), ['succeeded', 'waiting']);
    assert.match(waiting.steps[1]!.message!, /^Spent \d+,\d{3} of 4,000 tokens \(\$0\.\d\d\), this run's cap\./, waiting.steps[1]!.message!);
  } finally {
    fake.restore();
  }
});

pausing('the daily limit pauses a running step and holds a new run\'s step before it starts; raising it in Settings lets both go on', async () => {
  const fake = fakeEnvironment(dir);
  try {
    // Sonnet's price: 1,000 tokens (800 in, 200 out) cost $0.0036, so $0.01 is reached in the third turn.
    await factory.api.saveSettings({ spendLimitUsdPerDay: 0.01 });
    const pipeline = await factory.pipeline([agent('work')]);
    const first = await factory.api.startRun({ pipelineId: pipeline.id });
    const paused = await factory.waitForRun(first.id, ['waiting', 'failed', 'succeeded']);
    assert.is(paused.steps[0]!.budgetStop?.limit, 'daily');
    assert.match(paused.steps[0]!.message!, /^Spent \$0\.\d\d today of the daily limit of \$0\.01 \(Settings\)\. The agent was last/, paused.steps[0]!.message!);
    assert.ok((await factory.api.snapshot()).spentTodayUsd! >= 0.01);

    const second = await factory.api.startRun({ pipelineId: pipeline.id });
    const held = await factory.waitForRun(second.id, ['waiting', 'failed', 'succeeded']);
    assert.is(held.steps[0]!.budgetStop?.limit, 'daily');
    assert.match(held.steps[0]!.message!, /The step did not start\. Raise the limit in Settings/, held.steps[0]!.message!);
    assert.is(invocations(fake.args).length, 1, 'the second run started no CLI');

    await factory.api.saveSettings({ spendLimitUsdPerDay: 5 });
    assert.is((await factory.waitForRun(first.id, ['succeeded', 'failed'])).status, 'succeeded');
    assert.is((await factory.waitForRun(second.id, ['succeeded', 'failed', 'waiting'], 20_000)).status, 'succeeded');
    assert.not.ok('budgetLedger' in (await factory.api.getRun(first.id))!.steps[0]!, 'a finished run read from disk shows no ledger');
    // The day's spend is written to the data folder.
    await waitFor(() => existsSync(join(factory.dir, 'spend.json')), 5000, 'spend.json');
    const stored = JSON.parse(readFileSync(join(factory.dir, 'spend.json'), 'utf8')) as { days: Record<string, number> };
    assert.ok(stored.days[localDay(Date.now())]! > 0.01);
  } finally {
    fake.restore();
  }
});

// ─── Restart ───

const restart = suite('budget restart');

restart('the pause survives kill -9: after a restart the run still waits with its budgetStop, and approving resumes the session', async () => {
  const folder = makeTempDir('factory-budget-restart');
  const fake = fakeEnvironment(folder);
  let child: ChildFactory | undefined;
  try {
    child = await startChildFactory(childPath, folder);
    const { projects } = await child.call('snapshot');
    const pipeline = await child.call('savePipeline', { projectId: projects[0]!.id, name: 'Capped', variables: {}, steps: [agent('work', { budget: { maxTokens: 4000 } })] });
    const { id } = await child.call('startRun', { pipelineId: pipeline.id });
    let run: Run | undefined;
    await waitFor(async () => (run = (await child!.call('getRun', id))!)?.status === 'waiting', 10_000, 'the run to pause');
    const sessionId = run!.steps[0]!.sessionId!;
    // Killed once run.json says it waits (as restart.test.ts waits for the process group to be written).
    const runFile = join(folder, 'runs', id, 'run.json');
    await waitFor(() => (JSON.parse(readFileSync(runFile, 'utf8')) as Run).status === 'waiting', 5000, 'run.json to say the run waits');

    await child.kill('SIGKILL');
    child = await startChildFactory(childPath, folder);
    const after = (await child.call('getRun', id))!;
    assert.is(after.status, 'waiting', JSON.stringify(after.steps[0]));
    assert.is(after.steps[0]!.budgetStop?.limit, 'tokens');
    assert.match(after.steps[0]!.message!, /^Spent \d+,\d{3} of 4,000 tokens/, after.steps[0]!.message!);

    await child.call('approveStep', id, 'work', true);
    await waitFor(async () => (run = (await child!.call('getRun', id))!)?.status === 'succeeded', 10_000, `the run to succeed (it is ${run?.status})`);
    const resumed = invocations(fake.args)[1]!.argv;
    assert.ok(resumed.includes('--resume') && resumed.includes(sessionId));
  } finally {
    await child?.kill('SIGKILL');
    fake.restore();
    removeTempDir(folder);
  }
});

// ─── Bad input ───

const input = suite('budget input');
let saving: TestFactory;
input.before(async () => {
  saving = await startTestFactory();
});
input.after(async () => {
  await saving.close();
});

/** Saves a pipeline and answers with its warnings. */
function save(steps: Step[], extra: Record<string, unknown> = {}) {
  return saving.api.savePipeline({ projectId: saving.projectId, name: 'Budget', variables: {}, steps, ...extra });
}

input('negative or non-numeric caps are refused at save with the field in words', async () => {
  await rejects(save([agent('work', { budget: { maxTokens: -5 } })]), /Step 1: the token cap must be a whole number of tokens above 0 and at most 1,000,000,000,000, or empty for no cap; not `-5`/);
  await rejects(save([agent('work', { budget: { maxCostUsd: 'lots' as unknown as number } })]), /Step 1: the cost cap must be a number of dollars above 0/);
  await rejects(save([agent('work')], { budget: { maxMinutes: 0 } }), /The time cap \(minutes\) must be a number of minutes above 0 .*\(for all agent steps of a run together\)/);
  await rejects(save([agent('work', { budget: { maxTokens: 1.5 } })]), /token cap must be a whole number/);
  await rejects(saving.api.saveSettings({ spendLimitUsdPerDay: -1 }), /The daily spend limit must be a number of dollars above 0 and at most 1,000,000, or empty for none; not `-1`/);
  await rejects(saving.api.saveSettings({ spendLimitUsdPerDay: 'ten' as unknown as number }), /The daily spend limit must be a number/);
  const issues: { field: string; message: string }[] = [];
  assert.equal(readBudget({ budget: { maxTokens: 100, maxMinutes: null } }, 'budget', 'budget', issues), { maxTokens: 100 });
  assert.equal(issues, []);
  assert.is((await saving.api.saveSettings({ spendLimitUsdPerDay: 2.5 })).spendLimitUsdPerDay, 2.5);
  assert.is((await saving.api.saveSettings({ spendLimitUsdPerDay: null as unknown as number })).spendLimitUsdPerDay, undefined, 'null clears the limit');
});

input('a cap a CLI cannot report is a warning at save', async () => {
  const amp = await save([agent('work', { harnessId: 'amp', budget: { maxTokens: 1000, maxMinutes: 10 } })]);
  assert.ok(amp.warnings?.some((warning) => warning.field === 'steps.work.budget' && warning.message.endsWith('Amp reports no tokens: only `maxMinutes` can be enforced')), JSON.stringify(amp.warnings));
  const minutesOnly = await save([agent('work', { harnessId: 'amp', budget: { maxMinutes: 10 } })]);
  assert.equal(minutesOnly.warnings, []);
  const codex = await save([agent('work', { harnessId: 'codex', model: 'o9-unknown', budget: { maxCostUsd: 1 } })]);
  assert.match(codex.warnings?.[0]?.message ?? '', /Codex reports no cost and Factory has no price for `o9-unknown`/);
  const claude = await save([agent('work', { budget: { maxCostUsd: 1 } })]);
  assert.equal(claude.warnings, []);
  const check = await saving.api.checkPipeline({ projectId: saving.projectId, name: 'Draft', variables: {}, steps: [agent('work', { harnessId: 'amp' })], budget: { maxCostUsd: 2 } });
  assert.match(check.warnings.map((warning) => warning.message).join('\n'), /the run's budget: Amp reports no tokens/);
});

input('a harness may bring its own prices, which the warnings and the estimates use; a bad price is refused in words', async () => {
  await rejects(saving.api.saveHarness(<HarnessDefinition><unknown>{ id: 'codex', prices: { o9: { inputPerMTok: -1, outputPerMTok: 2 } } }), /The price of `o9` needs inputPerMTok and outputPerMTok, dollars per million tokens from 0 to 10,000/);
  const codex = await saving.api.saveHarness(<HarnessDefinition><unknown>{ id: 'codex', prices: { o9: { inputPerMTok: 1, outputPerMTok: 2 } } });
  assert.equal(codex.prices, { o9: { inputPerMTok: 1, outputPerMTok: 2 } });
  assert.equal((await save([agent('work', { harnessId: 'codex', model: 'o9-unknown', budget: { maxCostUsd: 1 } })])).warnings, []);
  assert.equal(priceOf('o9-unknown', codex), { inputPerMTok: 1, outputPerMTok: 2 });
  assert.is((await saving.api.saveHarness(<HarnessDefinition><unknown>{ id: 'codex', prices: {} })).prices, undefined, 'an empty table removes them');
});

accounting.run();
pausing.run();
restart.run();
input.run();
