// Crash recovery (DESIGN §4 "Restart"): runs that were running when Factory stopped or crashed
// are finished as `failed` with the error `interrupted` (retryable); queued and waiting runs are
// left as they are. A step's process group that outlived the crash is stopped first.

import type { Run } from '../core/api';
import type { StoredStepRun } from '../core/runs';
import { environmentHolds } from './process-marker';

/**
 * Fails the runs that were running (in place), saves them, and returns them. Leftover process
 * groups are stopped only when their leader still carries the run's id in its environment (Linux
 * /proc), so a process group id reused by an unrelated program is never touched.
 */
export async function recoverRuns(runs: Run[], now: number, save: (run: Run) => Promise<void>): Promise<Run[]> {
  const interrupted = runs.filter((run) => run.status === 'running');
  for (const run of interrupted) {
    for (const step of run.steps as StoredStepRun[]) {
      if (step.processGroup !== undefined) await stopLeftoverProcessGroup(step.processGroup, run.id);
      delete step.processGroup;
      if (step.status === 'running') Object.assign(step, { status: 'failed', error: 'interrupted', finishedAt: now });
      else if (step.status === 'pending') step.status = 'skipped';
    }
    Object.assign(run, { status: 'failed', error: 'interrupted', finishedAt: now });
  }
  await Promise.all(interrupted.map(save));
  return interrupted;
}

async function stopLeftoverProcessGroup(processGroup: number, runId: string): Promise<void> {
  if (!Number.isInteger(processGroup) || processGroup <= 1) return;
  if (!(await environmentHolds(processGroup, `FACTORY_RUN_ID=${runId}`))) return;
  try {
    process.kill(-processGroup, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
