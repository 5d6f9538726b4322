// Finds processes by a marker in their environment (Linux /proc/<pid>/environ). A process that
// leaves its process group (`setsid`, a daemon's double fork) still carries the environment it was
// started with, so a marker given to a step's process follows everything the step starts.
//
// Only processes whose environment we may read are seen: those of the same user (all of them for
// root). Elsewhere (macOS, no /proc) nothing is found.

import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';

/** The environment variable runProcess sets on every process it starts. */
export const PROCESS_MARKER_VARIABLE = 'FACTORY_PROCESS_MARKER';

/** How many /proc/<pid>/environ files are read at once: few enough to leave libuv's threads to others. */
const READ_CONCURRENCY = 8;

/**
 * A new marker: `value` is 128 random bits in hex, so no other process can guess it; `entry` is
 * the `NAME=value` string a marked process's environment holds.
 */
export function createProcessMarker(): { name: string; value: string; entry: string } {
  const value = randomBytes(16).toString('hex');
  return { name: PROCESS_MARKER_VARIABLE, value, entry: `${PROCESS_MARKER_VARIABLE}=${value}` };
}

/**
 * True when process `pid`'s environment holds `entry` (`NAME=value`) as one whole string. False
 * when it does not, when the process is gone, is a zombie, or is not ours to read; never rejects.
 */
export async function environmentHolds(pid: number, entry: string, procFolder = '/proc'): Promise<boolean> {
  let environment: Buffer;
  try {
    environment = await readFile(`${procFolder}/${pid}/environ`);
  } catch {
    return false;
  }
  return holdsEntry(environment, Buffer.from(entry, 'utf8'));
}

/**
 * The pids of every process, except this one, whose environment holds `entry`, read from /proc
 * with at most READ_CONCURRENCY reads at once. Unreadable processes are skipped; without /proc
 * (macOS) the list is empty. Never rejects.
 */
export async function findMarkedProcesses(entry: string, procFolder = '/proc'): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(procFolder);
  } catch {
    return [];
  }
  const pids = names.filter((name) => /^[1-9]\d*$/.test(name)).map(Number).filter((pid) => pid > 1 && pid !== process.pid);
  const needle = Buffer.from(entry, 'utf8');
  const found: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pids.length) {
      const pid = pids[next++]!;
      const environment = await readFile(`${procFolder}/${pid}/environ`).catch(() => undefined);
      if (environment && holdsEntry(environment, needle)) found.push(pid);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, pids.length) }, worker));
  return found.sort((a, b) => a - b);
}

/**
 * The process group of process `pid` (the fifth field of /proc/<pid>/stat, after the command name
 * in parentheses, which may itself hold `) `); undefined when it cannot be read. Never rejects.
 */
export async function readProcessGroup(pid: number, procFolder = '/proc'): Promise<number | undefined> {
  const stat = await readFile(`${procFolder}/${pid}/stat`, 'latin1').catch(() => undefined);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const group = Number(fields[2]);
  return Number.isInteger(group) ? group : undefined;
}

/** Whether the NUL-separated `environment` has `entry` as one of its strings (not a part of one). */
function holdsEntry(environment: Buffer, entry: Buffer): boolean {
  for (let at = environment.indexOf(entry); at >= 0; at = environment.indexOf(entry, at + 1)) {
    const end = at + entry.length;
    if ((at === 0 || environment[at - 1] === 0) && (end === environment.length || environment[end] === 0)) return true;
  }
  return false;
}
