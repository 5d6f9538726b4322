// Crash recovery (DESIGN §4 "Restart"): runs that were running when Factory stopped or crashed
// are finished as `failed` with the error `interrupted` (retryable): the step that was running
// fails with that error, and the steps after it, which will not run, are `skipped`, as when a stop
// interrupts a run (runs.ts). Queued and waiting runs are left as they are. What a crashed step
// left running is stopped first, but only what is provably that run's; the empty step cgroups
// it left are removed.

import type { Run } from '../core/api';
import type { StoredStepRun } from '../core/runs';
import { StepCgroup } from './cgroup';
import { readProcessStatus } from './descendants';
import { findMarkedProcesses } from './process-marker';

/** How long a killed step cgroup may take to empty before it is left in place. */
const CGROUP_REMOVAL_MS = 5000;
/** An empty step cgroup this old is a leftover (a new one is empty only until its child starts). */
const STALE_CGROUP_MS = 60_000;

/**
 * Fails the runs that were running (in place), saves them, and returns them. Before that, for
 * each step that had a process group (Linux /proc; elsewhere nothing is stopped):
 * - the group is killed only when one of its processes still carries the run's id
 *   (`FACTORY_RUN_ID`) in its environment: a group id is not reused while any process of the old
 *   group lives, so then the whole group is the step's; an id now used by unrelated programs is
 *   never touched (their environment does not hold that run's id);
 * - every process carrying the run's id elsewhere (it left the group: `setsid`) is killed, and
 *   so is the step cgroup any of those is in, with whatever cleared its environment inside it.
 */
export async function recoverRuns(runs: Run[], now: number, save: (run: Run) => Promise<void>, procFolder = '/proc'): Promise<Run[]> {
  const interrupted = runs.filter((run) => run.status === 'running');
  for (const run of interrupted) {
    const steps = run.steps as StoredStepRun[];
    if (steps.some((step) => step.processGroup !== undefined)) await stopLeftovers(steps.flatMap((step) => step.processGroup ?? []), run.id, procFolder);
    for (const step of steps) {
      delete step.processGroup;
      if (step.status === 'running') Object.assign(step, { status: 'failed', error: 'interrupted', finishedAt: now });
      else if (step.status === 'pending' || step.status === 'waiting') step.status = 'skipped';
    }
    Object.assign(run, { status: 'failed', error: 'interrupted', finishedAt: now });
  }
  await Promise.all(interrupted.map(save));
  await StepCgroup.removeStale(STALE_CGROUP_MS);
  return interrupted;
}

async function stopLeftovers(groups: number[], runId: string, procFolder: string): Promise<void> {
  const carriers = await findMarkedProcesses(`FACTORY_RUN_ID=${runId}`, procFolder);
  const carrierGroups = new Set<number>();
  for (const pid of carriers) {
    const group = (await readProcessStatus(pid, procFolder))?.group;
    if (group !== undefined) carrierGroups.add(group);
  }
  for (const group of groups) if (Number.isInteger(group) && group > 1 && carrierGroups.has(group)) signal(-group, 'SIGKILL');
  for (const pid of carriers) {
    const cgroup = await StepCgroup.holding(pid, procFolder);
    await cgroup?.kill();
    signal(pid, 'SIGKILL');
    void cgroup?.removeWhenEmpty(CGROUP_REMOVAL_MS);
  }
}

function signal(target: number, name: NodeJS.Signals): void {
  try {
    process.kill(target, name);
  } catch {
    // Gone already, or not ours.
  }
}
