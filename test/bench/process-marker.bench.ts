// What looking for a step's escaped processes costs on a busy machine: 1,000 extra processes (with
// this process's environment, a few carrying the marker), then findMarkedProcesses read over /proc
// 20 times. Prints the processes seen, the scan's median and worst wall time, and the longest the
// event loop was held during a scan (a 1 ms interval timer's worst lateness, and the same with no
// scan), and checks that exactly the marked processes were found. Linux only (elsewhere there is
// nothing to scan).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createProcessMarker, findMarkedProcesses } from '../../src/engine/process-marker';

const EXTRA_PROCESSES = 1000;
const MARKED = 3;
const SCANS = 20;

if (process.platform !== 'linux') {
  console.log('no /proc here: nothing to measure');
  process.exit(0);
}

const marker = createProcessMarker();
const environment = { ...process.env } as Record<string, string>;
// One process group of sleeps, killed as a whole at the end; MARKED of them carry the marker.
const script = [
  `i=0; while [ $i -lt ${EXTRA_PROCESSES - MARKED} ]; do sleep 120 & i=$((i + 1)); done`,
  `i=0; while [ $i -lt ${MARKED} ]; do ${marker.name}=${marker.value} sleep 120 & i=$((i + 1)); done`,
  'echo ready; wait',
].join('\n');
const group = spawn('/bin/sh', ['-c', script], { env: environment, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise<void>((resolve) => group.stdout!.on('data', (chunk: Buffer) => chunk.includes('ready') && resolve()));

try {
  const processCount = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).length;
  const durations: number[] = [];
  let worstLateness = 0;
  let found: number[] = [];
  for (let scan = 0; scan < SCANS; scan++) {
    let expected = performance.now() + 1;
    const ticker = setInterval(() => {
      const now = performance.now();
      worstLateness = Math.max(worstLateness, now - expected);
      expected = now + 1;
    }, 1);
    const started = performance.now();
    found = await findMarkedProcesses(marker.entry);
    durations.push(performance.now() - started);
    clearInterval(ticker);
  }
  // The same timer with no scan running, for comparison.
  let idleLateness = 0;
  await new Promise<void>((resolve) => {
    let expected = performance.now() + 1;
    const ticker = setInterval(() => {
      const now = performance.now();
      idleLateness = Math.max(idleLateness, now - expected);
      expected = now + 1;
    }, 1);
    setTimeout(() => (clearInterval(ticker), resolve()), durations.reduce((sum, ms) => sum + ms, 0));
  });
  if (found.length !== MARKED) throw new Error(`found ${found.length} marked processes, expected ${MARKED}`);
  durations.sort((a, b) => a - b);
  console.log(`processes in /proc: ${processCount}`);
  console.log(`findMarkedProcesses: median ${durations[Math.floor(SCANS / 2)]!.toFixed(1)} ms, worst ${durations.at(-1)!.toFixed(1)} ms over ${SCANS} scans`);
  console.log(`event loop held at most ${worstLateness.toFixed(1)} ms during a scan (${idleLateness.toFixed(1)} ms with no scan)`);
  console.log(`found exactly the ${MARKED} marked processes`);
} finally {
  process.kill(-group.pid!, 'SIGKILL');
}
