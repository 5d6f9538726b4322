// A run's end: its work brought home from another machine, written, announced as finished, kept
// slim. Also the restart's check that no remote process outlives its run. (A run's beginning is
// RunService's `startRun`, in runs.ts.)

import type { Run } from '../core/api';
import { errorMessage } from '../core/errors';
import { isFinished, slimRun } from '../core/runs';
import { clearLiveness } from './rate-limit-waits';
import { executionRunner } from './runner';
import type { RunState } from './run-state';

/** A run whose execution was aborted: cancelled by the user, or interrupted by a stop. */
export function stoppedRun(state: RunState, run: Run): Promise<void> {
  return state.stopping ? finishRun(state, run, 'failed', 'interrupted') : finishRun(state, run, 'cancelled');
}

/**
 * Ends a run: its work brought home (an ssh runner), its unfinished steps skipped, written, announced
 * as `finished`, and then kept slim in memory.
 */
export async function finishRun(state: RunState, run: Run, status: 'succeeded' | 'failed' | 'cancelled' | 'rejected', error?: string): Promise<void> {
  await collectWork(state, run);
  const now = state.now();
  for (const step of run.steps) if (step.status === 'pending' || step.status === 'running' || step.status === 'waiting') step.status = 'skipped';
  for (const step of run.steps) clearLiveness(step);
  state.rateLimitTimers.disarm(run.id);
  run.status = status;
  run.finishedAt = now;
  if (error) run.error = error;
  else delete run.error;
  state.changed(run);
  await state.options.store.save(run);
  state.resuming.delete(run.id);
  state.announce({ type: 'finished', run });
  if (state.runs.get(run.id) === run) state.runs.set(run.id, slimRun(run));
}

/**
 * A run that worked on another machine brings its work home before it ends: its branch fetched
 * into the project repository, the remote worktree removed. The run then names the branch (as a
 * retired worktree does) and the kept-work rules apply to it. A failure is said in the run's log;
 * the remote worktree then stays.
 */
async function collectWork(state: RunState, run: Run): Promise<void> {
  const execution = run.workspace ? state.executionFor(run) : undefined;
  const project = state.options.config.current.projects.find((candidate) => candidate.id === run.projectId);
  if (!execution?.remote || !project) return;
  try {
    const branch = await execution.collect({ project, runId: run.id, ...(run.issue?.title ? { title: run.issue.title } : {}), env: state.gitEnvironment(), log: (line) => state.logs.note(run.id, line) });
    delete run.workspace;
    if (branch) run.branch = branch;
  } catch (error) {
    state.logs.note(run.id, `The work could not be brought home from ${execution.runner.name}; the remote worktree stays: ${errorMessage(error)}`);
  }
}

/** Stops what runs on ssh hosts for runs no longer live (Factory was killed): a restart leaves no remote process without its run. */
export function stopRemoteLeftovers(state: RunState): void {
  const live = [...state.runs.values()].filter((run) => !isFinished(run.status)).map((run) => run.id);
  for (const runner of state.options.config.current.runners) {
    executionRunner(runner, state.sshSetup).stopLeftovers?.(live).then(
      (stopped) => { if (stopped.length > 0) console.log(`Stopped ${stopped.length} process${stopped.length === 1 ? '' : 'es'} on ${runner.host} left by runs that no longer run: ${stopped.join(', ')}`); },
      (error) => console.warn(`Could not look for leftover processes on ${runner.name}: ${errorMessage(error)}`),
    );
  }
}
