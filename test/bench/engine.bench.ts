// Engine benchmarks (figures, not tests):
//  1. a shell step printing 1,000,000 lines, against the same command redirected to a file;
//  2. start-up, listRuns and snapshot with 10,000 finished runs on disk, and the memory they hold.
// ENGINE_BENCH=lines or ENGINE_BENCH=runs runs one of them alone (RSS then is that part's own).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFactory } from '../../src/app';
import type { Run } from '../../src/core/api';
import { newRunId } from '../../src/core/ids';
import { shell, startTestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const freshStartPath = new URL('./runs-memory.child.mjs', import.meta.url).pathname;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

async function millionLines(): Promise<void> {
  const factory = await startTestFactory();
  try {
    const command = 'seq 1 1000000';
    const plainStart = performance.now();
    execFileSync('/bin/sh', ['-c', `${command} > ${join(factory.dir, 'plain.txt')}`]);
    const plainMs = performance.now() - plainStart;

    const pipeline = await factory.pipeline([shell('flood', command)]);
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    const started = performance.now();
    const run = await factory.api.startRun({ pipelineId: pipeline.id });
    const done = await factory.waitForRun(run.id, ['succeeded', 'failed'], 120_000);
    const observedMs = performance.now() - started;
    // The run's own times: from its creation to its end, without the test's wait for the event.
    const engineMs = done.finishedAt! - done.createdAt;
    const stepMs = done.steps[0]!.finishedAt! - done.steps[0]!.startedAt!;
    clearInterval(sampler);
    // The whole log, as a download has it: every line, in order, and Factory's own lines around them.
    const file = readFileSync(join(factory.dir, 'runs', run.id, 'logs', 'flood.1.log'), 'utf8').split('\n');
    const lines = file.filter((line) => /^\d+$/.test(line));
    let inOrder = lines.length === 1_000_000;
    for (let index = 0; inOrder && index < lines.length; index++) inOrder = lines[index] === String(index + 1);
    const page = await factory.api.readStepLog(run.id, 'flood');
    const quiet = await factory.pipeline([shell('quiet', 'true')], { name: 'Quiet' });
    const quietRun = await factory.waitForRun((await factory.api.startRun({ pipelineId: quiet.id })).id, ['succeeded'], 10_000);
    const quietMs = quietRun.finishedAt! - quietRun.createdAt;
    console.log('Shell step printing 1,000,000 lines');
    console.log(`  redirected to a file   ${plainMs.toFixed(0)} ms`);
    console.log(`  through the engine     ${engineMs.toFixed(0)} ms from start to finish (${(engineMs / plainMs).toFixed(1)}x), the step alone ${stepMs} ms (${(stepMs / plainMs).toFixed(1)}x), seen by the test after ${observedMs.toFixed(0)} ms; a run of \`true\` takes ${quietMs} ms`);
    console.log(`  lines in the log file  ${lines.length.toLocaleString('en')} ${inOrder ? 'all present, in order' : 'MISSING OR OUT OF ORDER'}; readStepLog answers ${page.length} lines (${page[0]?.line.slice(0, 40)}…)`);
    console.log(`  RSS while running      ${mb(rssBefore)} before, ${mb(rssPeak)} at the peak (+${mb(rssPeak - rssBefore)})`);
    if (!inOrder) process.exitCode = 1;
  } finally {
    await factory.close();
  }
}

function finishedRun(index: number, pipelineId: string, projectId: string): Run {
  const createdAt = Date.now() - (10_000 - index) * 60_000;
  const steps = ['prepare', 'choose', 'report', 'notify'];
  return {
    id: newRunId(createdAt), pipelineId, pipelineName: 'Demo', projectId,
    issue: { title: `Issue number ${index}`, key: `ENG-${index}` }, variables: {},
    status: index % 7 === 0 ? 'failed' : 'succeeded', createdAt, startedAt: createdAt + 10, finishedAt: createdAt + 5000,
    workspace: '/tmp/demo',
    steps: steps.map((id, stepIndex) => ({
      id, name: id, kind: 'shell', status: 'succeeded', attempt: 1, startedAt: createdAt + stepIndex, finishedAt: createdAt + stepIndex + 1,
      exitCode: 0, output: `output of ${id} for run ${index}\n`.repeat(4),
    })),
    pipeline: {
      id: pipelineId, projectId, name: 'Demo', variables: {}, createdAt, updatedAt: createdAt,
      steps: steps.map((id) => ({ id, name: id, kind: 'shell', command: `echo ${id} "{{issue.title}}"` })),
    },
  };
}

async function tenThousandRuns(): Promise<void> {
  const dir = makeTempDir('factory-bench-runs');
  try {
    const seed = await startFactory({ dataDir: dir, platform: 'web', uiRoot: 'dist/ui' });
    const { pipelines, projects } = await seed.api.snapshot();
    await seed.stop();
    for (let index = 0; index < 10_000; index++) {
      const run = finishedRun(index, pipelines[0]!.id, projects[0]!.id);
      mkdirSync(join(dir, 'runs', run.id), { recursive: true });
      writeFileSync(join(dir, 'runs', run.id, 'run.json'), JSON.stringify(run));
    }
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const factory = await startFactory({ dataDir: dir, platform: 'web', uiRoot: 'dist/ui' });
    const startMs = performance.now() - started;
    const listTimes: number[] = [];
    const snapshotTimes: number[] = [];
    let listed = 0;
    for (let index = 0; index < 50; index++) {
      const t0 = performance.now();
      listed = (await factory.api.listRuns()).length;
      listTimes.push(performance.now() - t0);
      const t1 = performance.now();
      await factory.api.snapshot();
      snapshotTimes.push(performance.now() - t1);
    }
    const searchTimes: number[] = [];
    for (let index = 0; index < 50; index++) {
      const t0 = performance.now();
      await factory.api.listRuns({ search: 'number 99', status: 'succeeded' });
      searchTimes.push(performance.now() - t0);
    }
    console.log('\n10,000 finished runs on disk');
    console.log(`  start-up to ready        ${startMs.toFixed(0)} ms (goal < 1000)`);
    console.log(`  listRuns() p50 / p99     ${percentile(listTimes, 0.5).toFixed(2)} / ${percentile(listTimes, 0.99).toFixed(2)} ms (${listed} runs; goal p50 < 20)`);
    console.log(`  listRuns(search) p50     ${percentile(searchTimes, 0.5).toFixed(2)} ms`);
    console.log(`  snapshot() p50 / p99     ${percentile(snapshotTimes, 0.5).toFixed(2)} / ${percentile(snapshotTimes, 0.99).toFixed(2)} ms (goal p50 < 10)`);
    console.log(`  RSS                      ${mb(process.memoryUsage().rss)} (${mb(process.memoryUsage().rss - rssBefore)} more than before start-up)`);
    await factory.stop();
    // This process wrote the runs and started Factory twice: its RSS says more about that than
    // about the runs. A fresh process that only starts Factory on them says what a user's start costs.
    const fresh = [0, 1, 2].map(() => JSON.parse(execFileSync(process.execPath, [freshStartPath, dir], { encoding: 'utf8' }).trim().split('\n').at(-1)!) as { startMs: number; rss: number; heapUsed: number; listed: number });
    const median = (pick: (figures: (typeof fresh)[number]) => number) => percentile(fresh.map(pick), 0.5);
    console.log(`  a fresh process          RSS ${mb(median((f) => f.rss))}, JS heap in use ${mb(median((f) => f.heapUsed))} after a collection, start-up ${median((f) => f.startMs).toFixed(0)} ms, ${fresh[0]!.listed} runs listed (median of 3; goal RSS <= 150 MB)`);
  } finally {
    removeTempDir(dir);
  }
}

const only = process.env.ENGINE_BENCH;
if (!only || only === 'lines') await millionLines();
if (!only || only === 'runs') await tenThousandRuns();
