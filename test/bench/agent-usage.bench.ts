// Factory's own overhead on an agent step that streams 100,000 usage-bearing lines (issue 24.5
// benchmark; figures, not tests): the fake Claude Code (FAKE_MODE=flood, each line an assistant
// message with its usage) run alone, its stdout read and dropped, beside the same step run through
// the engine (parser, live usage, liveness, usage-limit watch, logs, events). Printed, never asserted.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { AgentStep } from '../../src/core/api';
import { startTestFactory } from '../helpers/factory';

const lines = 100_000;
const fakes = resolve('test/fakes/bin');
process.env.PATH = `${fakes}:${process.env.PATH}`;
const floodEnv = { FAKE_MODE: 'flood', FAKE_FLOOD_LINES: String(lines), FAKE_NO_WRITE: '1' };

/** The fake CLI alone: wall time, and its CPU time as the kernel counted it (bash's `times`). */
async function alone(): Promise<{ wallMs: number; cpuMs: number }> {
  const started = performance.now();
  // `times` after the command prints the children's user and system time: `0m1.234s 0m0.123s`.
  const script = `${JSON.stringify(resolve(fakes, 'claude'))} -p --output-format stream-json --verbose < /dev/null | cat > /dev/null; times`;
  const child = spawn('bash', ['-c', script], { env: { ...process.env, ...floodEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  await new Promise((done) => child.on('close', done));
  const wallMs = performance.now() - started;
  const children = output.trim().split('\n').at(-1)!.split(/\s+/).map((time) => {
    const [, minutes, seconds] = /(\d+)m([\d.]+)s/.exec(time) ?? [, '0', '0'];
    return (Number(minutes) * 60 + Number(seconds)) * 1000;
  });
  return { wallMs, cpuMs: children.reduce((sum, value) => sum + value, 0) };
}

/** The same step through the engine: wall time from start to succeeded, and Factory's own CPU time (this process). */
async function throughEngine(): Promise<{ wallMs: number; cpuMs: number; tokens: number }> {
  const factory = await startTestFactory();
  try {
    const harness = (await factory.api.snapshot()).harnesses.find((candidate) => candidate.id === 'claude')!;
    await factory.api.saveHarness({ ...harness, env: floodEnv });
    const step: AgentStep = { id: 'flood', name: 'Flood', kind: 'agent', prompt: 'Stream', harnessId: 'claude' };
    const pipeline = await factory.pipeline([step]);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const { id } = await factory.api.startRun({ pipelineId: pipeline.id });
    const done = await factory.waitForRun(id, ['succeeded', 'failed'], 300_000);
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (done.status !== 'succeeded') throw new Error(`the run ${done.status}: ${done.error}`);
    return { wallMs, cpuMs: (used.user + used.system) / 1000, tokens: (done.usage?.inputTokens ?? 0) + (done.usage?.outputTokens ?? 0) };
  } finally {
    await factory.close();
  }
}

const cli = await alone();
const engine = await throughEngine();
const format = (ms: number) => `${Math.round(ms).toLocaleString('en')} ms`;
console.log(`agent step streaming ${lines.toLocaleString('en')} usage-bearing lines (fake Claude Code, flood)`);
console.log(`  the CLI alone:        wall ${format(cli.wallMs)}, its CPU ${format(cli.cpuMs)}`);
console.log(`  through the engine:   wall ${format(engine.wallMs)} (${(engine.wallMs / cli.wallMs).toFixed(2)}× the CLI alone), Factory's own CPU ${format(engine.cpuMs)} = ${((engine.cpuMs * 1000) / lines).toFixed(1)} µs a line`);
console.log(`  usage counted:        ${engine.tokens.toLocaleString('en')} tokens`);
