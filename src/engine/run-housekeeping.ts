// Workspaces and branches after a run: deleting a finished run (its work kept, kept-work.ts), the
// retention sweep of old worktrees, the project's run branches listed and deleted, and a pull
// request's merge or close recorded on the runs that opened it.

import { resolve } from 'node:path';
import type { Project, PullRequestRef, Run, RunBranch, StepRun } from '../core/api';
import { ConflictError, NotFoundError, errorMessage, quote } from '../core/errors';
import { isFinished, slimRun } from '../core/runs';
import { deleteRunBranch, listRunBranches, retireWorkspace } from './kept-work';
import type { RunState } from './run-state';
import { worktreeBranch, worktreePath } from './workspace';

/**
 * The merged or closed pull request of the run's branch, in words (`pull request #3 (merged)`): its
 * commits are on GitHub, so the branch counts as pushed. Undefined while it is open or unknown.
 */
export function proposedWork(run: Readonly<Run>): string | undefined {
  const branch = worktreeBranch(run.id);
  const pull = run.steps.find((step) => step.pullRequest?.branch === branch && (step.pullRequest.state === 'merged' || step.pullRequest.state === 'closed'))?.pullRequest;
  return pull ? `pull request #${pull.number} of ${pull.repository} (${pull.state})` : undefined;
}

/**
 * Deletes a finished run: its files and its logs. Its worktree goes, but not its work (kept-work.ts):
 * resolves with what was kept, in words, for a run that had a worktree or a kept branch.
 */
export async function deleteRun(state: RunState, id: unknown): Promise<string | undefined> {
  const run = state.requireRun(id);
  if (!isFinished(run.status)) throw new ConflictError(`Run \`${run.id}\` is ${run.status}; cancel it before deleting it`);
  await state.retiring.get(run.id);
  await state.beforeDelete?.(run);
  state.runs.delete(run.id);
  state.order = state.order.filter((candidate) => candidate !== run.id);
  state.options.pacer.forgetRun(run.id);
  const project = state.options.config.current.projects.find((candidate) => candidate.id === run.projectId);
  let kept: string | undefined;
  if (project?.worktrees && (run.workspace || run.branch)) {
    const lines: string[] = [];
    const retired = await retireWorkspace({ ...worktreeOptions(state, run, project), log: (line) => lines.push(line) });
    kept = retired?.message ?? `the worktree ${worktreePath(state.options.worktreesDir, run.id)} was left in place: ${lines.at(-1) ?? 'git failed'}`;
    console.log(`Deleted ${run.id}: ${kept}`);
  }
  await state.options.store.delete(run.id);
  state.options.hub.emit('run-deleted', run.id);
  return kept;
}

/**
 * Removes the worktree folders of runs finished more than `worktreeRetentionDays` ago (their work
 * kept on their branches), one run at a time; a retry meanwhile waits. The run then names its
 * branch and has no workspace: a retry makes the worktree again from that branch.
 */
export async function sweepWorktrees(state: RunState): Promise<void> {
  const days = state.options.config.settings.worktreeRetentionDays;
  if (!days || state.stopping) return;
  const before = state.now() - days * 24 * 3600_000;
  const root = resolve(state.options.worktreesDir);
  for (const slim of [...state.runs.values()]) {
    const project = state.options.config.current.projects.find((candidate) => candidate.id === slim.projectId);
    // A run whose pull request was merged or closed has its work on GitHub: its worktree goes now.
    const proposed = proposedWork(slim);
    if (!isFinished(slim.status) || !project?.worktrees || !slim.workspace?.startsWith(root) || (!proposed && (slim.finishedAt ?? Infinity) > before)) continue;
    const retiring = (async () => {
      const retired = await retireWorkspace({ ...worktreeOptions(state, slim, project), ...(proposed ? { pushedAs: proposed } : {}), log: (line) => state.logs.note(slim.id, line) });
      const run = retired && state.runs.get(slim.id) === slim ? await state.options.store.read(slim.id) : undefined;
      if (!retired || !run) return;
      delete run.workspace;
      if (retired.keptBranch) run.branch = retired.keptBranch;
      state.logs.note(run.id, proposed ? `Worktree removed (the work is in ${proposed}): ${retired.message}` : `Worktree removed after ${days} days: ${retired.message}`);
      await state.options.store.save(run);
      state.runs.set(run.id, slimRun(run));
      state.changed(run);
    })();
    state.retiring.set(slim.id, retiring);
    await retiring.catch((error) => console.error(`Removing the worktree of ${slim.id} failed: ${errorMessage(error)}`)).finally(() => state.retiring.delete(slim.id));
  }
}

/** The run branches of a project, with the title of the run each belongs to and whether it is in use. */
export async function listProjectRunBranches(state: RunState, projectId: unknown): Promise<RunBranch[]> {
  const branches = await listRunBranches(state.options.config.getProject(projectId), state.gitEnvironment(), state.runCommand);
  return branches.map((branch) => {
    const run = state.runs.get(branch.runId);
    const inUse = run !== undefined && (!isFinished(run.status) || run.workspace !== undefined);
    // A branch whose pull request was merged or closed counts as pushed: GitHub has its commits.
    const pushed = branch.pushed || (run !== undefined && proposedWork(run) !== undefined);
    return run ? { ...branch, pushed, runTitle: run.issue?.title ?? run.pipelineName, inUse } : { ...branch, inUse };
  });
}

/** Deletes one run branch, or every one whose commits are all on other branches (`merged`); never one of a run that is not finished. */
export async function deleteProjectRunBranches(state: RunState, projectId: unknown, which: unknown): Promise<string[]> {
  const project = state.options.config.getProject(projectId);
  const branches = await listRunBranches(project, state.gitEnvironment(), state.runCommand);
  const chosen = which === 'merged' ? branches.filter((branch) => branch.ahead === 0) : branches.filter((branch) => branch.branch === which);
  if (which !== 'merged' && chosen.length === 0) throw new NotFoundError(`Project ${quote(project.name)} has no run branch ${quote(which)}`);
  const deleted: string[] = [];
  for (const { branch, runId } of chosen) {
    const run = state.runs.get(runId);
    if (run && !isFinished(run.status)) {
      if (which === 'merged') continue;
      throw new ConflictError(`Run \`${runId}\` is ${run.status}: its branch is in use`);
    }
    if (run?.workspace) {
      if (which === 'merged') continue;
      throw new ConflictError(`Run \`${runId}\` still has its worktree: delete the run (its work is kept) or wait for the worktree to be removed`);
    }
    await deleteRunBranch(project, branch, state.gitEnvironment(), state.runCommand).catch((error) => {
      throw new ConflictError(errorMessage(error));
    });
    deleted.push(branch);
    if (run?.branch === branch) {
      const full = await state.options.store.read(runId);
      if (full) {
        delete full.branch;
        await state.options.store.save(full);
        state.runs.set(runId, slimRun(full));
        state.changed(full);
      }
    }
  }
  return deleted;
}

/**
 * Records a pull request's last known state on the steps of the runs that opened or updated it
 * (a github-review trigger saw it merged or closed), so kept-work counts their branch as pushed.
 * Returns the ids of the runs changed; a run already showing that state is left alone, and a
 * merge is final (a late event saying closed does not undo it).
 */
export async function markPullRequest(service: RunState, repository: string, number: number, state: NonNullable<PullRequestRef['state']>): Promise<string[]> {
  const isIt = (step: StepRun) => step.pullRequest !== undefined && step.pullRequest.state !== 'merged' && step.pullRequest.number === number && step.pullRequest.repository.toLowerCase() === repository.toLowerCase();
  const changed: string[] = [];
  for (const id of [...service.order]) {
    const run = service.runs.get(id);
    if (!run?.steps.some((step) => isIt(step) && step.pullRequest!.state !== state)) continue;
    const finished = isFinished(run.status);
    const target = finished ? await service.options.store.read(id) : run;
    if (!target || service.runs.get(id) !== run) continue; // deleted or changed meanwhile: the next event or poll says it again
    for (const step of target.steps) if (isIt(step)) step.pullRequest = { ...step.pullRequest!, state };
    await service.options.store.save(target);
    if (finished) service.runs.set(id, slimRun(target));
    service.changed(target);
    changed.push(id);
  }
  return changed;
}

function worktreeOptions(state: RunState, run: Run, project: Project) {
  return { project, runId: run.id, ...(run.issue?.title ? { title: run.issue.title } : {}), worktreesDir: state.options.worktreesDir, env: state.gitEnvironment(), run: state.runCommand };
}
