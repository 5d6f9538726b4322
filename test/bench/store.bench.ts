// What durability costs: an atomic, fsynced rewrite against a plain writeFileSync (which neither
// syncs nor protects against a torn file), for a 10 KB and a 1 MB file; then appending a million
// log lines through JsonlAppender. Prints milliseconds per write (p50 and p99) and lines per second.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/store/atomic';
import { JsonlAppender, readJsonLinesReport } from '../../src/store/jsonl';

const folder = mkdtempSync(join(tmpdir(), 'factory-bench-'));

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

async function measure(count: number, write: (index: number) => Promise<void> | void): Promise<{ p50: number; p99: number }> {
  await write(-1); // warm-up: the first write creates the file
  const timings: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await write(index);
    timings.push(performance.now() - started);
  }
  timings.sort((left, right) => left - right);
  return { p50: percentile(timings, 0.5), p99: percentile(timings, 0.99) };
}

function contentOf(size: number, index: number): string {
  return JSON.stringify({ index, padding: 'x'.repeat(size - 40) });
}

const rows: string[][] = [['file', 'method', 'writes', 'p50 ms', 'p99 ms']];
try {
  for (const [label, size, count] of [['10 KB', 10_000, 200], ['1 MB', 1_000_000, 100]] as const) {
    const contents = [contentOf(size, 0), contentOf(size, 1)];
    const atomicPath = join(folder, `atomic-${label}.json`);
    const plainPath = join(folder, `plain-${label}.json`);
    const syncedPath = join(folder, `synced-${label}.json`);
    const methods: [string, (index: number) => Promise<void> | void][] = [
      ['writeFileAtomic', (index) => writeFileAtomic(atomicPath, contents[index & 1]!)],
      ['writeFileSync', (index) => writeFileSync(plainPath, contents[index & 1]!)],
      ['writeFileSync + fsync', (index) => {
        const descriptor = openSync(syncedPath, 'w');
        writeSync(descriptor, contents[index & 1]!);
        fsyncSync(descriptor);
        closeSync(descriptor);
      }],
    ];
    for (const [method, write] of methods) {
      const { p50, p99 } = await measure(count, write);
      rows.push([label, method, String(count), p50.toFixed(2), p99.toFixed(2)]);
    }
  }
  printTable(rows);

  const logPath = join(folder, 'log.jsonl');
  const appender = new JsonlAppender();
  const lineCount = 1_000_000;
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let index = 0; index < lineCount; index += 1) {
    pending.push(appender.append(logPath, [{ time: 1_700_000_000_000 + index, stream: 'stdout', text: `line ${index} of the build output` }]));
    // A process's output arrives in chunks across ticks, not all at once.
    if (index % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(pending);
  await appender.close();
  const appendMs = performance.now() - started;
  const readStarted = performance.now();
  const report = await readJsonLinesReport(logPath);
  const readMs = performance.now() - readStarted;
  if (report.records.length !== lineCount) throw new Error(`read back ${report.records.length} lines, expected ${lineCount}`);
  console.log('');
  printTable([
    ['JSON Lines', 'lines', 'ms', 'lines per second'],
    ['append', String(lineCount), appendMs.toFixed(0), Math.round(lineCount / (appendMs / 1000)).toLocaleString('en')],
    ['read', String(lineCount), readMs.toFixed(0), Math.round(lineCount / (readMs / 1000)).toLocaleString('en')],
  ]);
} finally {
  rmSync(folder, { recursive: true, force: true });
}

function printTable(table: string[][]): void {
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  for (const row of table) console.log(row.map((cell, column) => (column === 0 || column === 1 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
}
