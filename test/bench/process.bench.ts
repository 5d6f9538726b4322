// What reading a chatty step costs: `seq 1 1000000` through runProcess, every line handed to an
// onLine that keeps it (and without onLine: only the 1 MiB tail), against the same command writing straight to a file (no reading by us at
// all). Prints wall time for each, their ratio and this process's peak RSS, and checks that every
// line arrived, in order.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../../src/engine/process';

const LINE_COUNT = 1_000_000;
const folder = mkdtempSync(join(tmpdir(), 'factory-bench-process-'));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

try {
  const rssBefore = process.resourceUsage().maxRSS;

  const toFile = await timed(() =>
    runProcess({ command: '/bin/sh', args: ['-c', `seq 1 ${LINE_COUNT} > lines.txt`], cwd: folder, env }),
  );
  const fileBytes = statSync(join(folder, 'lines.txt')).size;

  const unread = await timed(() => runProcess({ command: '/bin/sh', args: ['-c', `seq 1 ${LINE_COUNT}`], cwd: folder, env }));
  const rssWithoutLines = process.resourceUsage().maxRSS;

  const lines: string[] = [];
  const throughUs = await timed(() =>
    runProcess({
      command: '/bin/sh',
      args: ['-c', `seq 1 ${LINE_COUNT}`],
      cwd: folder,
      env,
      onLine: (line) => lines.push(line),
    }),
  );

  let inOrder = lines.length === LINE_COUNT;
  for (let index = 0; inOrder && index < lines.length; index += 1) inOrder = lines[index] === String(index + 1);
  if (!inOrder) throw new Error(`lines missing or out of order: got ${lines.length} lines`);
  if (toFile.value.exitCode !== 0 || throughUs.value.exitCode !== 0) throw new Error('seq failed');

  const rssAfter = process.resourceUsage().maxRSS;
  const rows = [
    ['method', 'wall ms', 'lines/s'],
    ['seq > file (sh -c)', toFile.ms.toFixed(0), (LINE_COUNT / (toFile.ms / 1000)).toFixed(0)],
    ['runProcess, no onLine', unread.ms.toFixed(0), (LINE_COUNT / (unread.ms / 1000)).toFixed(0)],
    ['runProcess + onLine', throughUs.ms.toFixed(0), (LINE_COUNT / (throughUs.ms / 1000)).toFixed(0)],
  ];
  for (const row of rows) console.log(row.map((cell, index) => (index === 0 ? cell.padEnd(22) : cell.padStart(12))).join(''));
  console.log(`ratio runProcess / file: ${(throughUs.ms / toFile.ms).toFixed(1)}x`);
  console.log(`output: ${(fileBytes / 1e6).toFixed(1)} MB; kept tail ${throughUs.value.output.length} bytes, truncated ${throughUs.value.outputTruncated}`);
  const megabytes = (kilobytes: number): string => `${(kilobytes / 1024).toFixed(0)} MB`;
  console.log(`peak RSS: ${megabytes(rssBefore)} at start, ${megabytes(rssWithoutLines)} after the runs without onLine, ${megabytes(rssAfter)} after keeping the million lines`);
  console.log(`all ${LINE_COUNT} lines arrived in order`);
} finally {
  rmSync(folder, { recursive: true, force: true });
}
