// Runs every compiled test file (dist-test/**/*.test.mjs) in its own Node process, two at a time,
// prints each file's output, and ends with the totals as `N passed, N failed`, or
// `N passed, N failed, N skipped` when tests were skipped (a system tool missing outside CI: the
// files' `skipped: needs …` lines say what to install; see test/helpers/tools.ts).
//   node test/run.mjs             all tests
//   node test/run.mjs store qr    only the files whose path contains one of the words
//   node test/run.mjs --bench     the benchmarks (dist-test/bench/*.bench.mjs) instead, one at a time
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const outDir = join(root, process.env.TEST_OUT || 'dist-test');
const argv = process.argv.slice(2);
const bench = argv.includes('--bench');
const words = argv.filter((arg) => !arg.startsWith('--'));
const suffix = bench ? '.bench.mjs' : '.test.mjs';
/** A test file still running after this long is stopped and counted as failed (a hang must not stall CI). */
const fileTimeoutMs = bench ? 15 * 60_000 : 3 * 60_000;

function listFiles(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? listFiles(path) : name.endsWith(suffix) ? [path] : [];
  });
}

const files = listFiles(outDir)
  .filter((file) => words.length === 0 || words.some((word) => relative(outDir, file).includes(word)))
  .sort();

/** Runs one file; resolves with its counts read from uvu's summary (a crash counts as one failure). */
function runFile(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--enable-source-maps', file], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, fileTimeoutMs);
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) output += `\nStopped after ${fileTimeoutMs / 1000} s: the file did not finish (a hang, or something kept the process alive).\n`;
      const count = (label) => Number(output.match(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'm'))?.[1] ?? NaN);
      // uvu's Total counts the tests that ran; the skipped ones are only in Skipped.
      const total = count('Total');
      const passed = count('Passed');
      const skipped = bench || Number.isNaN(count('Skipped')) ? 0 : count('Skipped');
      let failed = Number.isNaN(total) ? 0 : total - (Number.isNaN(passed) ? 0 : passed);
      if (bench) failed = code === 0 ? 0 : 1;
      else if ((code !== 0 || Number.isNaN(total) || timedOut) && failed === 0) failed = 1; // crashed or hung outside a test
      const reasons = [...new Set(output.match(/^skipped: .*$/gm) ?? [])];
      resolve({ file, output, passed: bench || Number.isNaN(passed) ? 0 : passed, failed, skipped, reasons, code, signal, ms: Date.now() - started });
    });
  });
}

const results = [];
const queue = [...files];
const width = bench ? 1 : Math.max(1, Math.min(2, availableParallelism()));
await Promise.all(Array.from({ length: width }, async () => {
  while (queue.length > 0) {
    const result = await runFile(queue.shift());
    results.push(result);
    const name = relative(outDir, result.file);
    const mark = result.failed ? 'FAIL' : 'ok';
    const skipped = result.skipped ? `, ${result.skipped} skipped` : '';
    process.stdout.write(`\n── ${mark} ${name} (${result.passed} passed, ${result.failed} failed${skipped}, ${(result.ms / 1000).toFixed(1)} s)\n`);
    if (result.failed || bench || process.env.VERBOSE) process.stdout.write(result.output.trimEnd() + '\n');
    else for (const reason of result.reasons) process.stdout.write(`   ${reason}\n`);
  }
}));

const passed = results.reduce((sum, result) => sum + result.passed, 0);
const failed = results.reduce((sum, result) => sum + result.failed, 0);
const skipped = results.reduce((sum, result) => sum + result.skipped, 0);
if (files.length === 0) {
  console.log(`no ${bench ? 'benchmark' : 'test'} files found in dist-test/`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const reasons = [...new Set(results.flatMap((result) => result.reasons))].sort();
if (reasons.length > 0) console.log(`\nTests were skipped for missing tools (CI=true fails them instead):\n${reasons.map((reason) => `  ${reason}`).join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
