// Logs at any size (figures, not tests): a step printing 3,000,000 lines through the engine with
// remote access on, three SSE clients reading and one that stops reading meanwhile; then the
// first page, an earlier page, a search and the full download of that log, each with its time,
// the longest event-loop stall and the peak RSS.
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { shell, startTestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { connectEventStream } from '../helpers/sse-client';

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const lineCount = 3_000_000;

/** Runs `work`, and reports its time, the longest event-loop stall meanwhile and the peak RSS. */
async function measure<T>(label: string, work: () => Promise<T>, describe: (result: T) => string): Promise<T> {
  global.gc?.();
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  delay.enable();
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  delay.disable();
  clearInterval(sampler);
  console.log(`  ${label.padEnd(28)} ${ms.toFixed(0).padStart(6)} ms, longest stall ${(delay.max / 1e6).toFixed(0)} ms, RSS +${mb(peak - rssBefore)}; ${describe(result)}`);
  return result;
}

const port = await freePort();
const factory = await startTestFactory({ overrides: { remoteAccess: { enabled: true, port } } });
try {
  const base = `http://127.0.0.1:${port}`;
  const token = new URL(factory.remote.pairingLink()!).searchParams.get('t')!;
  const plainStart = performance.now();
  execFileSync('/bin/sh', ['-c', `seq 1 ${lineCount} > /dev/null`]);
  const plainMs = performance.now() - plainStart;

  const readers = await Promise.all([1, 2, 3].map(() => connectEventStream(`${base}/api/events`, { headers: { Authorization: `Bearer ${token}` } })));
  const stalled = connect(port, '127.0.0.1');
  stalled.on('error', () => {});
  stalled.pause();
  stalled.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  let stalledClosed = false;
  stalled.on('close', () => (stalledClosed = true));

  const pipeline = await factory.pipeline([shell('flood', `seq 1 ${lineCount}`)]);
  console.log(`A step printing ${lineCount.toLocaleString('en')} lines (seq alone: ${plainMs.toFixed(0)} ms)`);
  const run = await measure('through the engine', async () => {
    const started = await factory.api.startRun({ pipelineId: pipeline.id });
    return factory.waitForRun(started.id, ['succeeded', 'failed'], 300_000);
  }, (done) => `the run took ${done.finishedAt! - done.createdAt} ms (${((done.finishedAt! - done.createdAt) / plainMs).toFixed(1)}x)`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const logEvents = readers.map((reader) => reader.events.filter((event) => event.event === 'logs'));
  const largest = Math.max(...logEvents.flat().map((event) => Buffer.byteLength(event.data)));
  console.log(`  SSE: ${readers.filter((reader) => !reader.ended).length} of 3 reading clients still attached, ${logEvents[0]!.length} logs events each, the largest ${Math.round(largest / 1024)} KB; the stalled client ${stalledClosed ? 'was dropped' : 'is still attached (not yet stalled for 30 s)'}`);

  await measure('readStepLog, the last page', () => factory.api.readStepLog(run.id, 'flood'), (lines) => `${lines.length} lines, ${Math.round(Buffer.byteLength(JSON.stringify(lines)) / 1024)} KB`);
  await measure('readStepLog, a page at 1.5M', () => factory.api.readStepLog(run.id, 'flood', undefined, { before: 1_500_000, limit: 10_000 }), (lines) => `${lines.length} lines from ${lines[1]?.line}`);
  await measure('readStepLog, a search', () => factory.api.readStepLog(run.id, 'flood', undefined, { search: '2424242' }), (lines) => `${lines.filter((line) => line.n).length} matches`);
  await measure('GET the whole log', async () => {
    const response = await fetch(`${base}/api/log/${run.id}/flood/1`, { headers: { Authorization: `Bearer ${token}` } });
    let bytes = 0;
    for await (const chunk of response.body!) bytes += (chunk as Uint8Array).byteLength;
    return bytes;
  }, (bytes) => `${mb(bytes)} streamed`);
  for (const reader of readers) reader.close();
  stalled.destroy();
} finally {
  await factory.close();
}
