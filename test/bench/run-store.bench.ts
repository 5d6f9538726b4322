// What a data folder full of history costs: saving 10,000 finished runs (4 steps, short outputs, a
// pipeline snapshot), loading them all at start-up with a fresh RunStore, and appending a million
// log lines through the step log writers in batches of 500. Prints milliseconds, rates and memory.
import { rmSync } from 'node:fs';
import type { Pipeline, Run, Step } from '../../src/core/api';
import { newRunId } from '../../src/core/ids';
import { JsonlAppender } from '../../src/store/jsonl';
import { RunStore } from '../../src/store/run-store';
import { FileWriter } from '../../src/store/writer';
import { makeTempDir } from '../helpers/temp';

const runCount = 10_000;
const logLineCount = 1_000_000;
const logBatchSize = 500;
const saveConcurrency = 64;

const steps: Step[] = [
  { id: 'setup', name: 'Install', kind: 'shell', command: 'npm ci' },
  { id: 'plan', name: 'Plan', kind: 'agent', prompt: 'Plan a fix for "{{issue.title}}".\n\n{{issue.description}}', model: 'sonnet' },
  { id: 'review', name: 'Review', kind: 'approval', message: 'Ship it?', choices: { mode: 'single', options: ['Ship', 'Rework'] } },
  { id: 'ship', name: 'Ship', kind: 'shell', command: 'git push origin "HEAD:factory/{{run.id}}"', retries: 1 },
];

const pipeline: Pipeline = {
  id: 'pl_0123456789abcdef', projectId: 'prj_0123456789abcdef', name: 'Bug fix', description: 'From issue to pull request',
  variables: { branch: 'main', reviewer: 'alice' }, harnessId: 'claude', model: 'sonnet', steps, createdAt: 1_700_000_000_000, updatedAt: 1_700_000_000_000,
};

function finishedRun(index: number): Run {
  const createdAt = 1_700_000_000_000 + index * 60_000;
  return {
    id: newRunId(createdAt), pipelineId: pipeline.id, pipelineName: pipeline.name, projectId: pipeline.projectId,
    triggerId: 'trg_0123456789abcdef',
    issue: { title: `Login fails on Safari (#${index})`, key: `ENG-${index}`, url: `https://linear.app/acme/issue/ENG-${index}`, labels: ['bug'] },
    variables: { branch: 'main', reviewer: 'alice' }, status: 'succeeded', workspace: `/data/worktrees/run-${index}`,
    createdAt, startedAt: createdAt + 100, finishedAt: createdAt + 45_000,
    steps: [
      { id: 'setup', name: 'Install', kind: 'shell', status: 'succeeded', attempt: 1, startedAt: createdAt + 100, finishedAt: createdAt + 9_000, exitCode: 0, output: 'added 312 packages in 8s' },
      { id: 'plan', name: 'Plan', kind: 'agent', status: 'succeeded', attempt: 1, startedAt: createdAt + 9_000, finishedAt: createdAt + 30_000, exitCode: 0,
        prompt: `Plan a fix for "Login fails on Safari (#${index})".`, output: 'The cookie is set with SameSite=None without Secure; set Secure and add a test.',
        usage: { inputTokens: 12_000, outputTokens: 800, costUsd: 0.05 } },
      { id: 'review', name: 'Review', kind: 'approval', status: 'succeeded', attempt: 1, approval: { approved: true, selected: ['1'], at: createdAt + 40_000 } },
      { id: 'ship', name: 'Ship', kind: 'shell', status: 'succeeded', attempt: 1, startedAt: createdAt + 40_000, finishedAt: createdAt + 45_000, exitCode: 0, output: 'To github.com:acme/app.git\n * [new branch] HEAD -> factory/run' },
    ],
    pipeline,
  };
}

function megabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0) + ' MB';
}

const dataDir = makeTempDir('factory-bench-runs');
const wholeLog = { limit: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };
try {
  // Save: bounded, like an engine finishing runs; every save is an fsynced atomic write.
  const writer = new FileWriter();
  const appender = new JsonlAppender();
  const writingStore = new RunStore(dataDir, writer, appender);
  const runs = Array.from({ length: runCount }, (_, index) => finishedRun(index));
  const saveStarted = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: saveConcurrency }, async () => {
    while (next < runs.length) await writingStore.save(runs[next++]!);
  }));
  const saveMs = performance.now() - saveStarted;
  const bytesPerRun = Buffer.byteLength(JSON.stringify(runs[0]));

  // Load: a fresh store each time, as at start-up; then the background sweep for temp files.
  const loadTimes: number[] = [];
  let sweepMs = 0;
  const rssBefore = process.memoryUsage().rss;
  let rssAfter = 0;
  for (let round = 0; round < 3; round += 1) {
    const loadingStore = new RunStore(dataDir, new FileWriter(), new JsonlAppender());
    const loadStarted = performance.now();
    const { runs: loaded, problems } = await loadingStore.loadAll();
    loadTimes.push(performance.now() - loadStarted);
    if (round === 0) rssAfter = process.memoryUsage().rss;
    if (loaded.length !== runCount || problems.length > 0) throw new Error(`loaded ${loaded.length} runs with ${problems.length} problems`);
    const sweepStarted = performance.now();
    await loadingStore.flush();
    sweepMs = performance.now() - sweepStarted;
  }
  const loadMs = loadTimes[0]!;

  console.log(`runs: ${runCount.toLocaleString('en')} finished runs, ${bytesPerRun} bytes of run.json each`);
  console.log(`save     ${saveMs.toFixed(0).padStart(6)} ms  ${Math.round(runCount / (saveMs / 1000)).toLocaleString('en').padStart(10)} runs/s  (${saveConcurrency} at a time, fsynced)`);
  console.log(`loadAll  ${loadMs.toFixed(0).padStart(6)} ms  ${Math.round(runCount / (loadMs / 1000)).toLocaleString('en').padStart(10)} runs/s  RSS ${megabytes(rssBefore)} -> ${megabytes(rssAfter)}  (next rounds: ${loadTimes.slice(1).map((ms) => ms.toFixed(0)).join(', ')} ms)`);
  console.log(`temp file sweep after loadAll (background): ${sweepMs.toFixed(0)} ms`);

  // Logs: one run, a step with two attempts, each written as the engine writes it (one writer per
  // attempt), 500 lines at a time with a pause for the writer between batches.
  const runId = runs[0]!.id;
  const appendStarted = performance.now();
  for (const attempt of [1, 2]) {
    const writer = writingStore.logs.logWriter(runId, 'setup', attempt);
    for (let start = (attempt - 1) * (logLineCount / 2); start < attempt * (logLineCount / 2); start += logBatchSize) {
      for (let index = start; index < start + logBatchSize; index += 1) {
        writer.line(`npm http fetch GET 200 https://registry.npmjs.org/package-${index} 12ms`, 'out', 1_700_000_000_000 + index);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writer.end();
  }
  await appender.close();
  const appendMs = performance.now() - appendStarted;
  const readStarted = performance.now();
  const readBack = (await writingStore.logs.readLog(runId, 'setup', 1, wholeLog)).lines.length + (await writingStore.logs.readLog(runId, 'setup', 2, wholeLog)).lines.length;
  const readMs = performance.now() - readStarted;
  if (readBack !== logLineCount) throw new Error(`read back ${readBack} log lines, expected ${logLineCount}`);
  console.log(`log writer ${appendMs.toFixed(0).padStart(6)} ms  ${Math.round(logLineCount / (appendMs / 1000)).toLocaleString('en').padStart(10)} lines/s  (batches of ${logBatchSize}, awaited one by one)`);
  console.log(`readLog    ${readMs.toFixed(0).padStart(6)} ms  ${Math.round(logLineCount / (readMs / 1000)).toLocaleString('en').padStart(10)} lines/s  RSS ${megabytes(process.memoryUsage().rss)}`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
