// Stops a step's process tree. Every signal goes to the whole process group the step's process
// leads, so what it starts in the background is stopped with it: SIGTERM, then SIGKILL after the
// grace period. Processes that left the group on purpose (`setsid`, daemons) are found, on Linux, in
// three ways and stopped the same way: the cgroup each call gets where the system lets Factory make
// one (cgroup.ts), which nothing the step starts can leave; the descendants followed through /proc
// where it does not (descendants.ts); and the marker each call puts in the child's environment
// (process-marker.ts). process.ts decides when to stop; this file does the signalling.

import { quote } from '../core/errors';
import type { StepCgroup } from './cgroup';
import { type DescendantTracker, readProcessStatus } from './descendants';
import { findMarkedProcesses } from './process-marker';

/** How often a stopping group is checked for being gone, so SIGKILL is not sent (or waited for) in vain. */
export const GROUP_CHECK_MS = 50;

/**
 * Sends `signal` to every process in the group `pid` leads, with `kill` (process.kill by default).
 * Returns true when at least one process received it, false when the group no longer exists (or is
 * not ours to signal). Throws RangeError for a pid that is not an integer above 1: `kill(-1)` would
 * reach every process we own.
 */
export function killProcessGroup(pid: number, signal: NodeJS.Signals, kill: SignalSender = sendSignal): boolean {
  checkGroupId(pid);
  try {
    kill(-pid, signal);
    return true;
  } catch (error) {
    if (isMissingOrForeign(error)) return false;
    throw error;
  }
}

/** True while any process of the group `pid` leads exists (a zombie counts). RangeError as killProcessGroup. */
export function isProcessGroupAlive(pid: number): boolean {
  checkGroupId(pid);
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    if (isMissingOrForeign(error)) return false;
    throw error;
  }
}

/**
 * The processes of one call that may have left its group: those in its cgroup, those seen as its
 * descendants (still the same processes), and those carrying its marker (see process-marker.ts).
 * They are stopped like the group: SIGTERM, then, `graceMs` after, SIGKILL to every one found
 * again (and to the whole cgroup), unless all those sent SIGTERM are gone before (checked every
 * GROUP_CHECK_MS). The SIGKILL looks again rather than trusting the pids it has: a pid may have
 * been reused, a process may have forked.
 */
export class Leftovers {
  private readonly terminated = new Set<number>();
  private killTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly entry: string,
    private readonly graceMs: number,
    private readonly kill: SignalSender,
    private readonly cgroup?: StepCgroup,
    private readonly descendants?: DescendantTracker,
  ) {}

  /**
   * Sends SIGTERM to each process found not sent one yet, except the members of `group`, which
   * their group's SIGTERM reached already (a second one means "hurry" to some programs). Resolves
   * once sent; never rejects.
   */
  async terminate(group: number): Promise<void> {
    const fresh: number[] = [];
    for (const pid of await this.find()) {
      if (this.terminated.has(pid) || (await readProcessStatus(pid))?.group === group) continue;
      this.terminated.add(pid);
      fresh.push(pid);
      signalProcess(this.kill, pid, 'SIGTERM');
    }
    if (fresh.length > 0 && this.killTimer === undefined) this.scheduleKill();
  }

  private async find(): Promise<number[]> {
    const [marked, members, descendants] = await Promise.all([
      findMarkedProcesses(this.entry),
      this.cgroup?.members() ?? [],
      this.descendants?.living() ?? [],
    ]);
    return [...new Set([...marked, ...members, ...descendants])].filter((pid) => pid > 1 && pid !== process.pid);
  }

  private scheduleKill(): void {
    const check = setInterval(() => {
      if ([...this.terminated].some(isProcessAlive)) return;
      clearInterval(check);
      clearTimeout(this.killTimer);
      this.killTimer = undefined;
    }, GROUP_CHECK_MS);
    this.killTimer = setTimeout(() => {
      clearInterval(check);
      this.killTimer = undefined;
      void this.cgroup?.kill();
      void this.find().then((pids) => {
        for (const pid of pids) signalProcess(this.kill, pid, 'SIGKILL');
      });
    }, this.graceMs);
  }
}

type SignalSender = (pid: number, signal: NodeJS.Signals) => void;

export function sendSignal(pid: number, signal: NodeJS.Signals): void {
  process.kill(pid, signal);
}

/** Sends `signal` to process `pid` with `kill`; false when that failed (it is gone, or not ours). Never throws. */
export function signalProcess(kill: SignalSender, pid: number, signal: NodeJS.Signals): boolean {
  try {
    kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while process `pid` exists (a zombie counts). */
function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** ESRCH: no such group; EPERM: the id now belongs to processes that are not ours. */
function isMissingOrForeign(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ESRCH' || code === 'EPERM';
}

/** Numbers as written (quote() would print NaN and Infinity as null), anything else quoted. */
export function describeValue(value: unknown): string {
  return typeof value === 'number' ? String(value) : quote(value);
}

function checkGroupId(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 1) throw new RangeError(`Not a process group id: ${describeValue(pid)}`);
}
