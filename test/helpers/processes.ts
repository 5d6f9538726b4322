// Reading this machine's process table (/proc) in tests that prove processes die: the processes a
// test marked on their command line, with their children, and whether a pid still runs.
import { readFileSync, readdirSync } from 'node:fs';

/** Pids of the processes whose command line holds `marker`, and of their children. */
export function markedTree(marker: string): number[] {
  const table = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      const parent = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
      return [{ pid: Number(pid), parent, marked: readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) }];
    } catch {
      return [];
    }
  });
  const marked = new Set(table.filter((entry) => entry.marked).map((entry) => entry.pid));
  return table.filter((entry) => marked.has(entry.pid) || marked.has(entry.parent)).map((entry) => entry.pid);
}

/** Whether `pid` still exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
