// Which earlier run a follow-up continues (issue 23.4): the latest run before it that worked on the
// same pull request branch, either because one of its steps opened that pull request or because it
// was itself a follow-up of it. Pure: the run service gives the runs and reads them whole.

import type { Run } from '../core/api';
import type { EarlierAgentWork } from './steps';

/** How many earlier runs on the branch are read before giving up (each may be a disk read). */
const maxRunsLookedAt = 20;

/** True when `run` worked on `branch`: a step of it opened the pull request, or it followed one up. */
function workedOnBranch(run: Run, branch: string): boolean {
  return run.followUp?.branch === branch || run.steps.some((step) => step.pullRequest?.branch === branch);
}

/**
 * The ids of the runs before `run` in `runs` (oldest first, as the run service keeps them) that worked on its follow-up
 * branch, newest first, at most `maxRunsLookedAt`; none for a run that is not a follow-up.
 */
export function earlierRunsOnBranch(runs: Iterable<Run>, run: Run): string[] {
  const branch = run.followUp?.branch;
  if (!branch) return [];
  const found: string[] = [];
  for (const candidate of runs) {
    if (candidate.id === run.id) break;
    if (workedOnBranch(candidate, branch)) found.push(candidate.id);
  }
  return found.reverse().slice(0, maxRunsLookedAt);
}

/**
 * A whole run's agent work (it needs the pipeline snapshot and the outputs, so not a slim run):
 * each agent step that ran, with its harness, session and final answer; undefined when no agent
 * step left a session or an answer (a run that failed at setup is skipped for an older one).
 */
export function agentWorkOf(run: Run): EarlierAgentWork | undefined {
  const pipeline = run.pipeline;
  if (!pipeline) return undefined;
  const steps: EarlierAgentWork['steps'] = [];
  run.steps.forEach((stepRun, index) => {
    const step = pipeline.steps[index];
    if (step?.kind !== 'agent' || stepRun.kind !== 'agent' || (!stepRun.sessionId && !stepRun.output)) return;
    const harnessId = step.harnessId ?? pipeline.harnessId;
    steps.push({
      stepId: stepRun.id,
      ...(harnessId ? { harnessId } : {}),
      ...(stepRun.sessionId ? { sessionId: stepRun.sessionId } : {}),
      ...(stepRun.output ? { output: stepRun.output } : {}),
    });
  });
  if (steps.length === 0) return undefined;
  return { runId: run.id, ...(run.workspace ? { workspace: run.workspace } : {}), steps };
}
