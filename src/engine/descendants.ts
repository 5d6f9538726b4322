// Follows a step's process tree through Linux /proc while the step runs, so that what it started is
// still known when it stops, even after leaving the process group and clearing its environment
// (`setsid env -i sleep 300 &`), which the group signal and the marker (process-marker.ts) miss.
// Used where Linux gives Factory no cgroup of its own (cgroup.ts); elsewhere (macOS) it finds nothing.
//
// Every process ever seen as a descendant is recorded with its start time (clock ticks since boot,
// from /proc/<pid>/stat), and is signalled only while a process of that pid has that start time: a
// pid the system reused for an unrelated program is never touched. A process is a descendant when
// its parent is a recorded one that is still the same process, so a child stays known after its
// parent died and it was reparented (to init or a subreaper). What escapes: a process whose parent
// died before any look saw it (a double fork finished between two looks), unless it kept the group
// or the marker.

import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** The fields of /proc/<pid>/stat that tell who a process is and where it came from. */
interface ProcessStatus {
  pid: number;
  parent: number;
  group: number;
  /** Clock ticks after boot when it started: with the pid, it names one process for good. */
  startTime: number;
}

/**
 * Parses /proc/<pid>/stat. The command name, in parentheses, may itself hold `) ` and spaces, so
 * the fields are counted after the last `)`. Undefined for text that is not a stat line.
 */
export function parseProcessStatus(text: string): ProcessStatus | undefined {
  const close = text.lastIndexOf(')');
  const pid = Number(text.slice(0, text.indexOf(' ')));
  if (close < 0 || !Number.isInteger(pid)) return undefined;
  // After the name: state (field 3), ppid (4), pgrp (5), …, starttime (22).
  const fields = text.slice(close + 2).split(' ');
  const [parent, group, startTime] = [fields[1], fields[2], fields[19]].map(Number);
  if (!Number.isInteger(parent) || !Number.isInteger(group) || !Number.isInteger(startTime)) return undefined;
  return { pid, parent: parent!, group: group!, startTime: startTime! };
}

/** Process `pid`'s status, or undefined when it is gone (or there is no /proc). Never rejects. */
export async function readProcessStatus(pid: number, procFolder = '/proc'): Promise<ProcessStatus | undefined> {
  const text = await readFile(`${procFolder}/${pid}/stat`, 'latin1').catch(() => undefined);
  return text === undefined ? undefined : parseProcessStatus(text);
}

/**
 * The processes started, directly or not, by one process (the root, included), as far as /proc
 * shows them at each `update`. Nothing is signalled here: `living` says which are still there.
 */
export class DescendantTracker {
  /** pid → start time of every process seen in the tree and not seen gone since. */
  private readonly known = new Map<number, number>();
  private walk: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  private constructor(root: ProcessStatus, private readonly procFolder: string) {
    this.known.set(root.pid, root.startTime);
  }

  /**
   * Starts following process `pid`; undefined when it cannot be read (gone and reaped, no /proc).
   * Synchronous: called right after the spawn, while the child cannot have been reaped yet, so
   * the start time read is the child's.
   */
  static start(pid: number, procFolder = '/proc'): DescendantTracker | undefined {
    let text: string;
    try {
      text = readFileSync(`${procFolder}/${pid}/stat`, 'latin1');
    } catch {
      return undefined;
    }
    const root = parseProcessStatus(text);
    return root?.pid === pid ? new DescendantTracker(root, procFolder) : undefined;
  }

  /** Looks every `intervalMs` until `stopPolling`. The timer does not keep Node running. */
  poll(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.update(), intervalMs);
    this.timer.unref();
  }

  stopPolling(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at the tree; a call during a look waits for a new one after it. Never rejects. */
  update(): Promise<void> {
    const previous = this.walk ?? Promise.resolve();
    const next = previous.then(() => this.look());
    this.walk = next;
    void next.then(() => {
      if (this.walk === next) this.walk = undefined;
    });
    return next;
  }

  /** The recorded processes still running under the same pid and start time, ascending. Never rejects. */
  async living(): Promise<number[]> {
    const alive: number[] = [];
    for (const [pid, startTime] of this.known) {
      const status = await readProcessStatus(pid, this.procFolder);
      if (status?.startTime === startTime) alive.push(pid);
    }
    return alive.sort((a, b) => a - b);
  }

  private async look(): Promise<void> {
    const table = new ProcessTable(this.procFolder);
    const queue = [...this.known.keys()];
    while (queue.length > 0) {
      const pid = queue.pop()!;
      const status = await readProcessStatus(pid, this.procFolder);
      if (status === undefined || status.startTime !== this.known.get(pid)) {
        this.known.delete(pid); // gone, or its pid now names another process
        continue;
      }
      for (const child of await table.childrenOf(pid)) {
        if (this.known.has(child)) continue;
        const childStatus = await readProcessStatus(child, this.procFolder);
        // Still its child now (not a reused pid), and started after it.
        if (childStatus?.parent !== pid || childStatus.startTime < status.startTime) continue;
        this.known.set(child, childStatus.startTime);
        queue.push(child);
      }
    }
  }
}

/**
 * The children of a process: from /proc/<pid>/task/<tid>/children (each thread's own children;
 * a kernel built without CONFIG_PROC_CHILDREN has none of these files), or else from the parent
 * field of every /proc/<pid>/stat, read once per look.
 */
class ProcessTable {
  private byParent: Promise<Map<number, number[]>> | undefined;

  constructor(private readonly procFolder: string) {}

  async childrenOf(pid: number): Promise<number[]> {
    const tasks = await readdir(`${this.procFolder}/${pid}/task`).catch(() => [] as string[]);
    const children: number[] = [];
    for (const task of tasks) {
      const text = await readFile(`${this.procFolder}/${pid}/task/${task}/children`, 'latin1').catch((error: NodeJS.ErrnoException) => error);
      if (typeof text === 'string') children.push(...text.split(' ').filter((word) => word !== '').map(Number));
      else if (text.code === 'ENOENT' && task === String(pid)) return (await this.readParents()).get(pid) ?? [];
    }
    return children;
  }

  private readParents(): Promise<Map<number, number[]>> {
    this.byParent ??= (async () => {
      const byParent = new Map<number, number[]>();
      const names = await readdir(this.procFolder).catch(() => [] as string[]);
      for (const name of names) {
        if (!/^[1-9]\d*$/.test(name)) continue;
        const status = await readProcessStatus(Number(name), this.procFolder);
        if (status) byParent.set(status.parent, [...(byParent.get(status.parent) ?? []), status.pid]);
      }
      return byParent;
    })();
    return this.byParent;
  }
}
