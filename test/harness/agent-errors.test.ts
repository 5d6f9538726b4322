// An agent step that times out or stalls says why: the last error its CLI reported, from the
// CLI's error events (every parser) or its stderr. The fakes in test/fakes/bin play the errors
// the real CLIs print without a network (FAKE_MODE=offline), then hang.
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AgentStep, HarnessDefinition } from '../../src/core/api';
import { createAgentRunner, errorFromStderr } from '../../src/harness/agent-step';
import { builtInHarnesses } from '../../src/harness/builtins';
import type { StepAttempt } from '../../src/engine/steps';
import { startTestFactory, type TestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const fakes = resolve('test/fakes/bin');
process.env.PATH = `${fakes}:${process.env.PATH}`;

const agent = (id: string, prompt: string, extra: Partial<AgentStep> = {}): AgentStep => ({ id, name: id, kind: 'agent', prompt, ...extra });
const codexOffline = 'Reconnecting... waiting for network (Connection failed: error sending request)';

const timeouts = suite<{ factory: TestFactory }>('agent errors: timeouts');

timeouts.before.each(async (context) => {
  context.factory = await startTestFactory();
});
timeouts.after.each(async (context) => {
  await context.factory.close();
});

async function setHarness(factory: TestFactory, harnessId: string, change: Partial<HarnessDefinition>): Promise<void> {
  const harness = (await factory.api.snapshot()).harnesses.find((candidate) => candidate.id === harnessId)!;
  await factory.api.saveHarness({ ...harness, ...change });
}

async function timedOutError(factory: TestFactory, harnessId: string): Promise<string> {
  const pipeline = await factory.pipeline([agent('work', 'Say hi', { harnessId, timeoutSec: 2 })], { name: `Offline ${harnessId}` });
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const done = await factory.waitForRun(run.id, ['failed', 'succeeded'], 15_000);
  assert.is(done.status, 'failed', harnessId);
  return done.steps[0]!.error!;
}

timeouts('Codex offline: the timeout names the last error Codex reported in --json mode', async ({ factory }) => {
  await setHarness(factory, 'codex', { env: { FAKE_MODE: 'offline', FAKE_RETRY_MS: '5' } });
  assert.is(await timedOutError(factory, 'codex'), `Timed out after 2.0 s; the last error Codex reported: ${codexOffline}`);
});

timeouts('Codex offline without --json: the last error line of its stderr', async ({ factory }) => {
  const codex = builtInHarnesses.find((harness) => harness.id === 'codex')!;
  await setHarness(factory, 'codex', { env: { FAKE_MODE: 'offline', FAKE_RETRY_MS: '5' }, args: codex.args.filter((arg) => arg !== '--json'), output: 'text' });
  assert.is(await timedOutError(factory, 'codex'), 'Timed out after 2.0 s; the last error Codex reported: Reconnecting... waiting for network');
});

timeouts('every built-in harness: a timeout after an error event names that error', async ({ factory }) => {
  for (const harness of builtInHarnesses.filter((candidate) => candidate.id !== 'codex')) {
    await setHarness(factory, harness.id, { env: { FAKE_MODE: 'offline', FAKE_RETRY_MS: '5' } });
    assert.is(await timedOutError(factory, harness.id), `Timed out after 2.0 s; the last error ${harness.name} reported: Simulated failure`, harness.id);
  }
});

timeouts('a timeout with no error reported says only that', async ({ factory }) => {
  await setHarness(factory, 'claude', { env: { FAKE_MODE: 'hang' } });
  assert.is(await timedOutError(factory, 'claude'), 'Timed out after 2.0 s');
});

const stalls = suite('agent errors: stalls');

stalls('the stall notice names the last error, and so does the timeout that follows', async () => {
  const dir = makeTempDir('factory-agent-errors');
  try {
    const definition: HarnessDefinition = { ...builtInHarnesses.find((harness) => harness.id === 'codex')!, env: { FAKE_MODE: 'offline', FAKE_RETRY_MS: '5' } };
    const notices: string[] = [];
    const runner = createAgentRunner({
      harness: () => definition,
      resolveCommand: async () => join(fakes, 'codex'),
      defaultHarnessId: () => 'codex',
      stalled: (_runId, _stepId, message) => notices.push(message),
    });
    const attempt = {
      runId: 'run_x', step: agent('slow', 'Think', { stallSec: 0.5 as number }), attempt: 1, workspace: dir,
      template: { vars: {}, steps: {}, run: { id: 'run_x' }, project: { name: 'p', path: dir }, workspace: dir },
      environment: { PATH: process.env.PATH! }, secrets: [], timeoutMs: 5_000, signal: new AbortController().signal,
      log: () => undefined, output: () => undefined, record: () => undefined, started: () => undefined,
    } as unknown as StepAttempt;
    // The timeout leaves room for a slow start on a loaded machine: the stall (0.5 s after the CLI's
    // last line) must come before it.
    const outcome = await runner(attempt);
    assert.is(notices.length, 1);
    assert.match(notices[0]!, /^No output for .*: the agent may be stuck/);
    assert.ok(notices[0]!.endsWith(`; the last error Codex reported: ${codexOffline}`), notices[0]);
    assert.is(outcome.status, 'failed');
    assert.is('error' in outcome ? outcome.error : undefined, `Timed out after 5.0 s; the last error Codex reported: ${codexOffline}`);
  } finally {
    removeTempDir(dir);
  }
});

const stderr = suite('agent errors: stderr lines');

stderr('a stderr line that reads like an error is quoted without its time, level tag and colours', () => {
  const cases: Array<[string, string | undefined]> = [
    ['ERROR: Reconnecting... waiting for network', 'Reconnecting... waiting for network'],
    ['2026-11-22T17:05:51.587065Z ERROR codex_api::endpoint::responses_websocket: failed to connect to Responses WebSocket stage=Unknown',
      'codex_api::endpoint::responses_websocket: failed to connect to Responses WebSocket stage=Unknown'],
    ['\u001b[31mError:\u001b[0m Invalid API key', 'Invalid API key'],
    ['fatal: not a git repository', 'not a git repository'],
    ['Simulated failure', 'Simulated failure'],
    ['warning: Falling back from WebSockets to HTTPS transport. stream disconnected', undefined],
    ['Reading additional input from stdin...', undefined],
    ['child-pid 1234', undefined],
    ['', undefined],
  ];
  for (const [line, expected] of cases) assert.is(errorFromStderr(line), expected, line);
  assert.is(errorFromStderr(`error: ${'x'.repeat(1000)}`)!.length, 300);
});

timeouts.run();
stalls.run();
stderr.run();
