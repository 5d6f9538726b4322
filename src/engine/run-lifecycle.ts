// A run's beginning and end: a new run made durable from a start request (its runner chosen, its
// pipeline snapshot frozen), and a run ended (its work brought home from another machine, written,
// announced as finished, kept slim). Also the restart's check that no remote process outlives its run.

import type { Pipeline, Run, StepRun } from '../core/api';
import { ConflictError, errorMessage } from '../core/errors';
import { newRunId } from '../core/ids';
import { isFinished, slimRun, validateStartRequest } from '../core/runs';
import { chooseRunner } from '../core/runner-choice';
import { clearLiveness } from './rate-limit-waits';
import { executionRunner } from './runner';
import type { RunOrigin, RunState } from './run-state';

/** A new run from a start request, written durably (not yet known to the service). */
export async function createRun(state: RunState, input: unknown, origin: RunOrigin): Promise<Run> {
  if (state.stopping) throw new ConflictError('Factory is stopping; the run was not started');
  const request = validateStartRequest(input);
  const pipeline = state.options.config.getPipeline(request.pipelineId);
  const { current } = state.options.config;
  const { runnerId } = chooseRunner({
    trigger: current.triggers.find((trigger) => trigger.id === origin.triggerId), pipeline,
    project: current.projects.find((project) => project.id === pipeline.projectId), runners: current.runners,
  });
  const run: Run = {
    id: newRunId(state.now()),
    pipelineId: pipeline.id,
    pipelineName: pipeline.name,
    projectId: pipeline.projectId,
    ...(origin.triggerId ? { triggerId: origin.triggerId } : {}),
    ...(origin.followUp ? { followUp: origin.followUp } : {}),
    ...(origin.agentSessionId ? { agentSessionId: origin.agentSessionId } : {}),
    ...(request.issue ? { issue: request.issue } : {}),
    variables: { ...pipeline.variables, ...request.variables },
    status: 'queued',
    createdAt: state.now(),
    steps: pipeline.steps.map((step): StepRun => ({ id: step.id, name: step.name, kind: step.kind, status: 'pending', attempt: 0 })),
    pipeline: snapshotOf(state, pipeline),
    runnerId,
  };
  await state.options.store.create(run);
  return run;
}

/**
 * The frozen copy of a pipeline that its runs keep. Configuration objects are replaced, never
 * changed, on every edit, so one copy serves every run started from the same version.
 */
function snapshotOf(state: RunState, pipeline: Pipeline): Pipeline {
  let snapshot = state.snapshots.get(pipeline);
  if (!snapshot) {
    snapshot = deepFreeze(JSON.parse(JSON.stringify(pipeline)) as Pipeline);
    state.snapshots.set(pipeline, snapshot);
  }
  return snapshot;
}

/** Freezes a JSON value and everything in it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

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
