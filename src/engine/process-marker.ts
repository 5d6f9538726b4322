// Finds processes by a marker in their environment (Linux /proc/<pid>/environ). A process that
// leaves its process group (`setsid`, a daemon's double fork) still carries the environment it was
// started with, so a marker given to a step's process follows everything the step starts.
//
// Only processes whose environment we may read are seen: those of the same user (all of them for
// root). Elsewhere (macOS, no /proc) nothing is found.

import { randomBytes } from 'node:crypto';
import { close, open, read } from 'node:fs';
import { readdir } from 'node:fs/promises';

/** The environment variable runProcess sets on every process it starts. */
const PROCESS_MARKER_VARIABLE = 'FACTORY_PROCESS_MARKER';

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
 * The pids of every process, except this one, whose environment holds `entry`. Unreadable
 * processes are skipped; without /proc (macOS) the list is empty. Never rejects.
 *
 * Calls share passes over /proc: a call made while a pass is under way is answered by the next
 * one (which starts after it, so it sees every process that existed at the call), together with
 * every other call made meanwhile. Many steps ending at once cost one or two passes, not one each.
 */
export function findMarkedProcesses(entry: string, procFolder = '/proc'): Promise<number[]> {
  let scanner = scanners.get(procFolder);
  if (!scanner) scanners.set(procFolder, (scanner = new SharedScan(procFolder)));
  return scanner.find(entry);
}

const scanners = new Map<string, SharedScan>();

/** One folder's queue of calls, answered a batch per pass; at most one pass at a time. */
class SharedScan {
  private waiting = new Map<string, ((pids: number[]) => void)[]>();
  private scanning = false;

  constructor(private readonly procFolder: string) {}

  find(entry: string): Promise<number[]> {
    return new Promise((resolve) => {
      this.waiting.set(entry, [...(this.waiting.get(entry) ?? []), resolve]);
      if (!this.scanning) void this.scan();
    });
  }

  private async scan(): Promise<void> {
    this.scanning = true;
    while (this.waiting.size > 0) {
      const batch = this.waiting;
      this.waiting = new Map();
      const found = await scanEnvironments([...batch.keys()], this.procFolder);
      for (const [entry, callers] of batch) for (const resolve of callers) resolve(found.get(entry) ?? []);
    }
    this.scanning = false;
    scanners.delete(this.procFolder);
  }
}

/**
 * One pass over `procFolder`: for each entry, the pids (ascending, this process and init left out)
 * whose environment holds it, with at most READ_CONCURRENCY reads at once. Never rejects.
 */
async function scanEnvironments(entries: string[], procFolder: string): Promise<Map<string, number[]>> {
  const found = new Map(entries.map((entry) => [entry, [] as number[]]));
  let names: string[];
  try {
    names = await readdir(procFolder);
  } catch {
    return found;
  }
  const pids = names.filter((name) => /^[1-9]\d*$/.test(name)).map(Number).filter((pid) => pid > 1 && pid !== process.pid);
  const needles = entries.map((entry) => Buffer.from(entry, 'utf8'));
  let next = 0;
  const worker = async (): Promise<void> => {
    let buffer: Buffer = Buffer.allocUnsafe(ENVIRONMENT_BUFFER_BYTES);
    while (next < pids.length) {
      const pid = pids[next++]!;
      const read = await readEnvironment(`${procFolder}/${pid}/environ`, buffer);
      if (!read) continue;
      buffer = read.buffer;
      const environment = buffer.subarray(0, read.length);
      needles.forEach((needle, index) => {
        if (holdsEntry(environment, needle)) found.get(entries[index]!)!.push(pid);
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, pids.length) }, worker));
  for (const list of found.values()) list.sort((a, b) => a - b);
  return found;
}

/** The first size of each reader's buffer; a larger environment makes it grow. */
const ENVIRONMENT_BUFFER_BYTES = 32_768;

/**
 * Reads a whole /proc/<pid>/environ into `buffer` (or a larger one, returned); undefined when it
 * cannot be read. This runs for every process on the machine at each step's end, so it costs what
 * it must: open, read and close through fs's callbacks (readFile would also fstat, and read once
 * more to see the end; FileHandle and promises nearly double the CPU time). A read shorter than
 * asked is the end: /proc's environ fills each read as far as the environment goes.
 */
function readEnvironment(path: string, buffer: Buffer): Promise<{ buffer: Buffer; length: number } | undefined> {
  return new Promise((resolve) => {
    open(path, 'r', (openError, descriptor) => {
      if (openError) return resolve(undefined);
      const finish = (result: { buffer: Buffer; length: number } | undefined): void => {
        close(descriptor, () => {});
        resolve(result);
      };
      const readFrom = (target: Buffer, length: number): void => {
        read(descriptor, target, length, target.length - length, length, (readError, bytesRead) => {
          if (readError) return finish(undefined);
          const total = length + bytesRead;
          if (total < target.length) return finish({ buffer: target, length: total });
          const larger = Buffer.allocUnsafe(target.length * 2);
          target.copy(larger);
          readFrom(larger, total);
        });
      };
      readFrom(buffer, 0);
    });
  });
}

/** Whether the NUL-separated `environment` has `entry` as one of its strings (not a part of one). */
function holdsEntry(environment: Buffer, entry: Buffer): boolean {
  for (let at = environment.indexOf(entry); at >= 0; at = environment.indexOf(entry, at + 1)) {
    const end = at + entry.length;
    if ((at === 0 || environment[at - 1] === 0) && (end === environment.length || environment[end] === 0)) return true;
  }
  return false;
}
