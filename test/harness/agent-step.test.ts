// Agent steps through the production engine, against the fake CLIs in test/fakes/bin (on PATH).
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AgentStep, HarnessDefinition, LogLine } from '../../src/core/api';
import { builtInHarnesses } from '../../src/harness/builtins';
import { createAgentRunner } from '../../src/harness/agent-step';
import { rejects } from '../helpers/assert';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const fakes = resolve('test/fakes/bin');
process.env.PATH = `${fakes}:${process.env.PATH}`;

const agent = (id: string, prompt: string, extra: Partial<AgentStep> = {}): AgentStep => ({ id, name: id, kind: 'agent', prompt, ...extra });

const steps = suite<{ factory: TestFactory }>('agent steps');

steps.before.each(async (context) => {
  context.factory = await startTestFactory();
});
steps.after.each(async (context) => {
  await context.factory.close();
});

async function useMode(factory: TestFactory, harnessId: string, env: Record<string, string>): Promise<void> {
  const harness = (await factory.api.snapshot()).harnesses.find((candidate) => candidate.id === harnessId)!;
  await factory.api.saveHarness({ ...harness, env });
}

steps('a Claude step gets its rendered prompt on stdin, runs in the workspace, and reports output, usage and tool calls', async ({ factory }) => {
  await useMode(factory, 'claude', {});
  const pipeline = await factory.pipeline([agent('implement', 'Implement {{issue.title}} carefully', { harnessId: 'claude', model: 'sonnet' })]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id, issue: { title: 'dark mode' } });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  const step = done.steps[0]!;
  assert.is(step.prompt, 'Implement dark mode carefully');
  assert.match(step.output!, /^Done: Implement dark mode carefully/);
  assert.equal(step.usage?.costUsd, 0.0123);
  assert.ok((step.usage?.inputTokens ?? 0) > 0 && (step.usage?.outputTokens ?? 0) > 0);
  assert.is(readFileSync(join(done.workspace!, 'agent-was-here.txt'), 'utf8'), 'Implement dark mode carefully');
  const log = await factory.api.readStepLog(run.id, 'implement');
  assert.ok(log.some((line) => /→ Bash/.test(line.line)), 'the tool call is a readable line');
  assert.ok(log.every((line) => !line.line.startsWith('{"type"')), 'no raw JSON in the log');
  const listed = (await factory.api.listRuns())[0]!;
  assert.is(listed.steps[0]!.prompt, undefined, 'prompts stay out of listRuns');
});

steps('every built-in harness runs its fake CLI to a final answer', async ({ factory }) => {
  for (const harness of builtInHarnesses) {
    const pipeline = await factory.pipeline([agent('work', `Task for ${harness.id}`, { harnessId: harness.id })], { name: `With ${harness.id}` });
    const run = await factory.api.startRun({ pipelineId: pipeline.id });
    const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
    assert.is(done.status, 'succeeded', `${harness.id}: ${done.error}`);
    assert.match(done.steps[0]!.output!, new RegExp(`Done: Task for ${harness.id}`), harness.id);
  }
});

steps('a prompt that starts with a dash is data, not a flag', async ({ factory }) => {
  for (const harnessId of ['claude', 'cursor']) {
    const pipeline = await factory.pipeline([agent('dash', '--help me with -rf /')], { name: `Dash ${harnessId}`, harnessId });
    const run = await factory.api.startRun({ pipelineId: pipeline.id });
    const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
    assert.is(done.status, 'succeeded', done.error);
    assert.match(done.steps[0]!.output!, /Done: --help me with -rf \//);
  }
});

steps('an error result fails the step with the CLI\'s own message', async ({ factory }) => {
  for (const harnessId of ['claude', 'codex', 'gemini', 'opencode', 'cursor']) {
    await useMode(factory, harnessId, { FAKE_MODE: 'error' });
    const pipeline = await factory.pipeline([agent('work', 'Try')], { name: `Error ${harnessId}`, harnessId });
    const run = await factory.api.startRun({ pipelineId: pipeline.id });
    const done = await factory.waitForRun(run.id, ['failed', 'succeeded']);
    assert.is(done.status, 'failed', harnessId);
    assert.match(done.steps[0]!.error!, /Simulated failure/, `${harnessId}: ${done.steps[0]!.error}`);
  }
});

steps('malformed output lines become plain log lines', async ({ factory }) => {
  await useMode(factory, 'claude', { FAKE_MODE: 'garbage' });
  const pipeline = await factory.pipeline([agent('work', 'Try', { harnessId: 'claude' })]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['failed', 'succeeded']);
  assert.is(done.status, 'succeeded', done.error);
  const log = await factory.api.readStepLog(run.id, 'work');
  assert.ok(log.some((line) => line.line === 'not json'));
});

steps('cancelling a hanging agent kills its whole process tree; a timeout fails it', async ({ factory }) => {
  await useMode(factory, 'claude', { FAKE_MODE: 'hang' });
  const pipeline = await factory.pipeline([agent('work', 'Hang', { harnessId: 'claude' })]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  let childPid = 0;
  await waitFor(async () => {
    const log: LogLine[] = await factory.api.readStepLog(run.id, 'work').catch(() => []);
    childPid = Number(log.map((line) => /child-pid (\d+)/.exec(line.line)?.[1]).find(Boolean) ?? 0);
    return childPid > 0;
  }, 5000, 'the fake to start its child');
  await factory.api.cancelRun(run.id);
  assert.is((await factory.api.getRun(run.id))!.status, 'cancelled');
  await waitFor(() => {
    try {
      process.kill(childPid, 0);
      return /\) Z/.test(readFileSync(`/proc/${childPid}/stat`, 'utf8'));
    } catch {
      return true;
    }
  }, 3000, 'the grandchild to be gone');

  const timed = await factory.pipeline([agent('work', 'Hang', { harnessId: 'claude', timeoutSec: 1 })], { name: 'Timed' });
  const timedRun = await factory.api.startRun({ pipelineId: timed.id });
  const failed = await factory.waitForRun(timedRun.id, ['failed', 'succeeded'], 15_000);
  assert.match(failed.steps[0]!.error!, /Timed out after 1\.0 s/);
});

steps('an agent whose CLI is missing or switched off fails with a clear reason', async ({ factory }) => {
  const harness = (await factory.api.snapshot()).harnesses.find((candidate) => candidate.id === 'claude')!;
  await factory.api.saveHarness({ ...harness, command: 'no-such-agent-cli' });
  const pipeline = await factory.pipeline([agent('work', 'Try', { harnessId: 'claude' })]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  assert.match((await factory.waitForRun(run.id, ['failed'])).steps[0]!.error!, /not installed: `no-such-agent-cli` was not found.*; install it with `npm install -g @anthropic-ai\/claude-code`/);
  await factory.api.setHarnessEnabled('claude', false);
  const second = await factory.api.startRun({ pipelineId: pipeline.id });
  assert.match((await factory.waitForRun(second.id, ['failed'])).steps[0]!.error!, /switched off/);
});

steps('detectHarnesses finds the fakes on PATH with their versions', async ({ factory }) => {
  const status = await factory.api.detectHarnesses();
  assert.equal(status.claude, { installed: true, path: join(fakes, 'claude'), version: '2.1.211 (Claude Code)' });
  assert.is(status.codex!.version, 'codex-cli 0.121.0');
  await waitFor(async () => (await factory.api.snapshot()).harnessStatus.claude?.installed === true, 2000, 'the snapshot to carry the status');
});

steps('generateText returns the agent\'s text; generatePipeline saves a valid pipeline and retries once', async ({ factory }) => {
  await useMode(factory, 'claude', { FAKE_MODE: 'json', FAKE_ANSWER: '```sh\nnpm test -- --coverage\n```' });
  const text = await factory.api.generateText({ target: 'command', instructions: 'run the tests with coverage', harnessId: 'claude' });
  assert.is(text, 'npm test -- --coverage');
  await rejects(factory.api.generateText({ target: 'poem', instructions: 'x', harnessId: 'claude' } as never), /The target must be prompt, systemPrompt or command/);

  const exported = { servicePipeline: 1, name: 'Generated', variables: {}, steps: [{ id: 'check', name: 'Check', kind: 'shell', command: 'echo "{{issue.title}}"' }] };
  await useMode(factory, 'claude', { FAKE_MODE: 'json', FAKE_ANSWER: `Here it is:\n${JSON.stringify(exported)}` });
  const pipeline = await factory.api.generatePipeline({ description: 'check things', harnessId: 'claude' });
  assert.is(pipeline.name, 'Generated');
  assert.ok((await factory.api.snapshot()).pipelines.some((candidate) => candidate.id === pipeline.id));

  await useMode(factory, 'claude', { FAKE_MODE: 'json', FAKE_ANSWER: JSON.stringify({ ...exported, steps: [{ id: 'Bad Id', kind: 'shell' }] }) });
  await rejects(factory.api.generatePipeline({ description: 'broken', harnessId: 'claude' }), /did not fit, twice/);
});

steps('a generation in progress can be cancelled by its request id', async ({ factory }) => {
  const started = join(factory.dir, 'generation-started');
  await useMode(factory, 'claude', { FAKE_MODE: 'slow', FAKE_SLOW_MS: '3000', FAKE_STARTED_FILE: started });
  const pending = factory.api.generateText({ target: 'prompt', instructions: 'write slowly', harnessId: 'claude', requestId: 'req-1' });
  await waitFor(() => existsSync(started), 10_000, 'the agent to start');
  await factory.api.cancelGenerate('req-1');
  await rejects(pending, /cancelled/);
});

steps('a flood of output is logged and the step keeps only its final answer', async ({ factory }) => {
  await useMode(factory, 'claude', { FAKE_MODE: 'flood', FAKE_FLOOD_LINES: '30000' });
  const pipeline = await factory.pipeline([agent('chatty', 'Talk a lot', { harnessId: 'claude' })]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed'], 30_000);
  assert.is(done.status, 'succeeded', done.error);
  assert.ok(done.steps[0]!.output!.length < 1000, 'the output is the final answer, not the flood');
  const log = await factory.api.readStepLog(run.id, 'chatty');
  assert.is(log.length, 1001, 'a page: the last 1,000 lines after a marker');
  assert.ok(log[0]!.skipped! + 1000 >= 30_000, `every line is on disk (${log[0]!.skipped} earlier lines)`);
});

steps('a shell step can use what an agent step answered', async ({ factory }) => {
  await useMode(factory, 'claude', { FAKE_MODE: 'json', FAKE_ANSWER: 'feature/dark-mode' });
  const pipeline = await factory.pipeline([agent('name', 'Name a branch', { harnessId: 'claude' }), shell('use', 'echo "branch={{steps.name.output}}"')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.steps[1]!.output, 'branch=feature/dark-mode\n');
});

const stall = suite('stall detection');

stall('an agent that prints nothing for its stall time gets a log line and a notice, then finishes', async () => {
  const dir = makeTempDir('factory-stall');
  try {
    const definition: HarnessDefinition = { ...builtInHarnesses.find((harness) => harness.id === 'claude')!, env: { FAKE_MODE: 'silent', FAKE_SILENT_MS: '1500' } };
    const notices: string[] = [];
    const lines: string[] = [];
    const runner = createAgentRunner({
      harness: () => definition,
      resolveCommand: async () => join(fakes, 'claude'),
      defaultHarnessId: () => 'claude',
      stalled: (_runId, stepId, message) => notices.push(`${stepId}: ${message}`),
    });
    const outcome = await runner({
      runId: 'run_x', step: agent('slow', 'Think', { stallSec: 0.5 as number }), attempt: 1, workspace: dir,
      template: { vars: {}, steps: {}, run: { id: 'run_x' }, project: { name: 'p', path: dir }, workspace: dir },
      environment: { PATH: process.env.PATH! }, secrets: [], timeoutMs: 20_000, signal: new AbortController().signal,
      log: (line) => lines.push(line), output: () => undefined, record: () => undefined, started: () => undefined,
    });
    assert.is(outcome.status, 'succeeded');
    assert.is(notices.length, 1);
    assert.match(notices[0]!, /^slow: No output for/);
    assert.ok(lines.some((line) => /may be stuck/.test(line)));
  } finally {
    removeTempDir(dir);
  }
});

steps.run();
stall.run();
