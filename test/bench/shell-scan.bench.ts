// What the shell-safety scan (shellCommandProblems) costs on long hostile commands (figures, not
// tests): each unit of test/helpers/hostile-shell-units.ts repeated to 10,000 and to 100,000
// characters, beside an ordinary script of the same lengths measured in the same run. Prints the
// best of 3 for each, the ratio 100k / 10k (about 10 when the scan is linear, about 100 when
// quadratic), and the 100k time as a multiple of the ordinary script's.
import { shellCommandProblems } from '../../src/core/shell-quoting';
import { hostileShellUnits, repeatToLength } from '../helpers/hostile-shell-units';

const SHORT = 10_000;
const LONG = 100_000;
const ROUNDS = 5;
/** The baseline: what a real step's command looks like, placeholders quoted, repeated. */
const ordinaryScript = 'git fetch origin && git checkout -B "fix/{{issue.key}}"\nnpm ci && npm test -- --grep "{{vars.n}}"\necho "done: {{issue.title}}"\n';

/** The best of ROUNDS scans of `unit` repeated to `length` characters, in milliseconds. */
function bestScanMs(unit: string, length: number): number {
  const command = repeatToLength(unit, length);
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    shellCommandProblems(command);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

function row(label: string, short: number, long: number, baselineLong: number): string {
  return `  ${label.padEnd(46)} ${short.toFixed(1).padStart(7)} ms ${long.toFixed(1).padStart(8)} ms ${(long / short).toFixed(1).padStart(6)}x ${(long / baselineLong).toFixed(1).padStart(7)}x`;
}

// One scan of everything first, so the JIT has compiled the scanner before the clock starts.
for (const unit of [ordinaryScript, ...hostileShellUnits]) shellCommandProblems(repeatToLength(unit, SHORT));
const baselineShort = bestScanMs(ordinaryScript, SHORT);
const baselineLong = bestScanMs(ordinaryScript, LONG);
console.log(`shellCommandProblems, best of ${ROUNDS}: each unit repeated to ${SHORT.toLocaleString('en')} and ${LONG.toLocaleString('en')} characters`);
console.log(`  ${'unit'.padEnd(46)} ${'10k'.padStart(10)} ${'100k'.padStart(11)} ${'100k/10k'.padStart(7)} ${'vs base'.padStart(8)}`);
console.log(row('(baseline) an ordinary script', baselineShort, baselineLong, baselineLong));
let worstRatio = 0;
for (const unit of hostileShellUnits) {
  const short = bestScanMs(unit, SHORT);
  const long = bestScanMs(unit, LONG);
  worstRatio = Math.max(worstRatio, long / short);
  console.log(row(JSON.stringify(unit), short, long, baselineLong));
}
console.log(`  largest 100k/10k ratio: ${worstRatio.toFixed(1)}x (baseline ${(baselineLong / baselineShort).toFixed(1)}x; linear is about 10x)`);
