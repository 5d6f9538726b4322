// The run service: starts, queues, drives, approves, cancels, retries and deletes runs.
//
// A run's life: queued → running (workspace, then steps in order) → waiting (an approval step;
// the run gives up its slot) → queued again once approved → ... → succeeded | failed |
// cancelled | rejected. A new run is durable before startRun resolves (the run store's journal);
// after that it is written before it does anything outside Factory, and when it waits or finishes.
// Active runs (queued, running, waiting) are kept whole in memory; finished runs are kept slim
// (no outputs, prompts or pipeline snapshot) and read from disk by getRun.
//
// The service is a façade over parts, one job each, sharing one RunState (run-state.ts):
// run-queue.ts (the queue and the slots), step-driver.ts (a run's steps in order), run-decisions.ts
// (approvals, budget pauses, usage-limit waits), run-lifecycle.ts (a run ended),
// run-queries.ts (reading runs and logs), run-housekeeping.ts (worktrees and branches after a run).
// Where a step executes is the run's runner (runner.ts); neither the queue nor the driver knows which.

import { snapshotRunCount, type ApprovalDecider, type LogLine, type Pipeline, type PullRequestRef, type Run, type RunBranch, type StepRun } from '../core/api';
import { ConflictError, errorMessage } from '../core/errors';
import { newRunId } from '../core/ids';
import { chooseRunner } from '../core/runner-choice';
import { copyRun, isFinished, slimRun, validateStartRequest } from '../core/runs';
import { isRateLimitWait } from './rate-limit-waits';
import { recoverRuns } from './recovery';
import { RunDecisions } from './run-decisions';
import * as housekeeping from './run-housekeeping';
import { finishRun, stopRemoteLeftovers } from './run-lifecycle';
import * as queries from './run-queries';
import { RunQueue } from './run-queue';
import { RunState, type RunLifecycleEvent, type RunOrigin, type RunServiceOptions, type RunStepEvent } from './run-state';
import { StepDriver } from './step-driver';

export type { RunLifecycleEvent, RunOrigin, RunServiceOptions, RunStepEvent } from './run-state';
export { proposedWork } from './run-housekeeping';
export { defaultStepTimeoutSec } from './step-driver';

export class RunService {
  private readonly state: RunState;
  private readonly queue: RunQueue;
  private readonly decisions: RunDecisions;
  private readonly driver: StepDriver;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Runs a crash interrupted (failed at open), announced as finished by `start`. */
  private interrupted: Run[] = [];

  private constructor(options: RunServiceOptions) {
    this.state = new RunState(options);
    this.queue = new RunQueue(this.state, (run, signal) => this.driver.drive(run, signal));
    this.decisions = new RunDecisions(this.state, this.queue);
    this.driver = new StepDriver(this.state, this.decisions);
  }

  /**
   * Loads the runs on disk and recovers from a stop or crash (DESIGN §4, recovery.ts). Nothing
   * starts before `start`. Returns the problems met while reading (unreadable run files are
   * skipped, not deleted).
   */
  static async open(options: RunServiceOptions): Promise<{ service: RunService; problems: string[] }> {
    const service = new RunService(options);
    const { runs, problems } = await options.store.loadAll((run) => (isFinished(run.status) ? slimRun(run) : run));
    service.interrupted = await recoverRuns(runs, service.state.now(), (run) => options.store.save(run));
    for (const run of runs) {
      service.state.runs.set(run.id, isFinished(run.status) ? slimRun(run) : run);
      service.state.order.push(run.id);
      if (run.status === 'queued') service.queue.restore(run.id);
    }
    return { service, problems };
  }

  /** Announces the runs a crash interrupted (as `finished`) to the subscribers, then starts queued runs. */
  start(): void {
    for (const run of this.interrupted) this.state.announce({ type: 'finished', run });
    this.interrupted = [];
    this.state.options.config.subscribe(() => {
      this.decisions.releaseDailyPauses();
      this.queue.pump();
    });
    // A step that waited out the model's usage limit before a restart goes on at its resumeAt.
    for (const run of this.state.runs.values()) for (const step of run.status === 'waiting' ? run.steps : []) if (isRateLimitWait(step)) this.decisions.armRateLimit(run, step);
    stopRemoteLeftovers(this.state);
    this.queue.pump();
    // Finished runs' worktrees past their time go now, and then once an hour.
    const sweep = () => void this.sweepWorktrees().catch((error) => console.error(`Sweeping worktrees failed: ${errorMessage(error)}`));
    this.sweepTimer = setInterval(sweep, 3600_000);
    this.sweepTimer.unref();
    setImmediate(sweep);
  }

  /** Subscribes to run lifecycle events; returns the unsubscribe function. */
  onLifecycle(listener: (event: RunLifecycleEvent) => void): () => void {
    this.state.lifecycleListeners.add(listener);
    return () => this.state.lifecycleListeners.delete(listener);
  }

  /** Subscribes to step starts and ends; returns the unsubscribe function. */
  onStep(listener: (event: RunStepEvent) => void): () => void {
    this.state.stepListeners.add(listener);
    return () => this.state.stepListeners.delete(listener);
  }

  /** Installs where agent steps get guidance: text appended to the step's rendered prompt. */
  setGuidanceSource(source: (run: Readonly<Run>, stepId: string) => string | undefined): void {
    this.state.guidanceSource = source;
  }

  /** Appends a line to the run's own log (the setup log), e.g. what write-back did. */
  logRunNote(runId: string, line: string): void {
    if (this.state.runs.has(runId)) this.state.logs.note(runId, line);
  }

  // ─── Reading (run-queries.ts) ───

  /** The latest runs that match the filter, newest first, slim. */
  listRuns(filterInput?: unknown): Run[] {
    return queries.listRuns(this.state, filterInput);
  }

  /** Every run, oldest first, as kept in memory (slim when finished). Treat as read-only. */
  allRuns(): Iterable<Run> {
    return queries.allRuns(this.state);
  }

  /** Installs the hook called before a run is deleted. */
  onBeforeDelete(hook: (run: Run) => Promise<void>): void {
    this.state.beforeDelete = hook;
  }

  /** The latest runs for the snapshot, slim. */
  latestRuns(): Run[] {
    return this.listRuns({ limit: snapshotRunCount });
  }

  /** The full run: outputs, rendered prompts and the pipeline snapshot; undefined for an unknown id. */
  getRun(id: unknown): Promise<Run | undefined> {
    return queries.getRun(this.state, id);
  }

  /** A page of one step attempt's log (default: the latest attempt, its last 1,000 lines; see LogPage). */
  readStepLog(runId: unknown, stepId: unknown, attempt?: unknown, page?: unknown): Promise<LogLine[]> {
    return queries.readStepLog(this.state, runId, stepId, attempt, page);
  }

  /** A page of the run's setup log. */
  readRunLog(runId: unknown, page?: unknown): Promise<LogLine[]> {
    return queries.readRunLog(this.state, runId, page);
  }

  /** The whole log of a step attempt ('' for setup), for a download: its file, or its lines (older logs). */
  logDownload(runId: unknown, stepId: unknown, attempt?: unknown): Promise<{ path: string } | { lines: string[] } | undefined> {
    return queries.logDownload(this.state, runId, stepId, attempt);
  }

  // ─── Starting and deciding ───

  /** Validates, snapshots the pipeline, writes the run durably, queues it; returns it as queued. */
  async startRun(input: unknown, origin: RunOrigin = {}): Promise<Run> {
    const run = await this.create(input, origin);
    const queued = copyRun(run);
    this.admit(run);
    return queued;
  }

  /** startRun without the copy of the run: resolves with its id (what a webhook delivery needs). */
  async queueRun(input: unknown, origin: RunOrigin = {}): Promise<string> {
    const run = await this.create(input, origin);
    this.admit(run);
    return run.id;
  }

  /**
   * A new run from a start request (its runner chosen, its pipeline snapshot frozen), durable in
   * the run store's journal when this resolves; not yet known to the service.
   */
  private async create(input: unknown, origin: RunOrigin): Promise<Run> {
    const { state } = this;
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
      pipeline: this.snapshotOf(pipeline),
      runnerId,
    };
    await state.options.store.journal.add(run);
    return run;
  }

  /**
   * The frozen copy of a pipeline that its runs keep. Configuration objects are replaced, never
   * changed, on every edit, so one copy serves every run started from the same version.
   */
  private snapshotOf(pipeline: Pipeline): Pipeline {
    let snapshot = this.state.snapshots.get(pipeline);
    if (!snapshot) {
      snapshot = deepFreeze(JSON.parse(JSON.stringify(pipeline)) as Pipeline);
      this.state.snapshots.set(pipeline, snapshot);
    }
    return snapshot;
  }

  /** Makes a durable new run known, announces it and queues it. */
  private admit(run: Run): void {
    this.state.runs.set(run.id, run);
    this.state.order.push(run.id);
    this.queue.enqueue(run.id);
    this.state.changed(run);
    this.queue.pump();
  }

  /** `by` is internal (the doors and trigger surfaces name who decided); it is recorded on the approval. */
  approveStep(runId: unknown, stepId: unknown, approved: unknown, comment?: unknown, selected?: unknown, by?: ApprovalDecider): Promise<void> {
    return this.decisions.approveStep(runId, stepId, approved, comment, selected, by);
  }

  /** Cancels a queued, running or waiting run; resolves once it has stopped. */
  async cancelRun(id: unknown): Promise<void> {
    const run = this.state.requireRun(id);
    if (isFinished(run.status)) throw new ConflictError(`Run \`${run.id}\` is already ${run.status}; only queued, running or waiting runs can be cancelled`);
    const active = this.queue.active.get(run.id);
    if (active && run.status === 'running') {
      active.controller.abort();
      await active.done;
      return;
    }
    // A run that just began to wait may still be writing that down: let it finish first.
    if (active) await active.done;
    if (isFinished(run.status)) return;
    for (const step of run.steps) if (step.status === 'waiting') Object.assign(step, { status: 'cancelled', finishedAt: this.state.now() });
    await finishRun(this.state, run, 'cancelled');
  }

  /** Queues a finished run again, from the start or from `fromStepId`; earlier steps keep their results. */
  async retryRun(id: unknown, fromStepId?: unknown): Promise<Run> {
    const slim = this.state.requireRun(id);
    if (!isFinished(slim.status)) throw new ConflictError(`Run \`${slim.id}\` is ${slim.status}; only a finished run can be retried`);
    await this.state.retiring.get(slim.id);
    let from = 0;
    if (fromStepId !== undefined && fromStepId !== null && fromStepId !== '') {
      this.state.requireStep(slim, fromStepId);
      from = slim.steps.findIndex((step) => step.id === fromStepId);
    }
    const run = await this.state.options.store.read(slim.id);
    if (!run?.pipeline) throw new ConflictError(`Run \`${slim.id}\` cannot be read from disk, so it cannot be retried`);
    // Still the same finished run? (Its entry may have been made slim meanwhile, which is no change.)
    const current = this.state.runs.get(slim.id);
    if (!current || !isFinished(current.status) || current.finishedAt !== slim.finishedAt) throw new ConflictError(`Run \`${slim.id}\` changed while it was being retried`);
    run.steps.forEach((step, index) => {
      if (index < from) return;
      // The pull request a step opened stays known (its state, the branch that counts as pushed); the step finds it again.
      const { id: stepId, name, kind, attempt, pullRequest } = step;
      run.steps[index] = { id: stepId, name, kind, attempt, status: 'pending', ...(pullRequest ? { pullRequest } : {}) };
    });
    run.status = 'queued';
    delete run.error;
    delete run.finishedAt;
    this.state.runs.set(run.id, run);
    // Queued only once written: a pump meanwhile (another run ending) must not start it before
    // its retry is on disk, nor change it before the caller gets its copy. A failed write leaves
    // the run as it was, finished.
    try {
      await this.state.options.store.save(run);
    } catch (error) {
      if (this.state.runs.get(run.id) === run) this.state.runs.set(run.id, current);
      throw error;
    }
    this.queue.enqueue(run.id);
    this.state.changed(run);
    const queued = copyRun(run);
    this.queue.pump();
    return queued;
  }

  // ─── Worktrees and branches (run-housekeeping.ts) ───

  /**
   * Deletes a finished run: its files and its logs. Its worktree goes, but not its work (kept-work.ts):
   * resolves with what was kept, in words, for a run that had a worktree or a kept branch.
   */
  deleteRun(id: unknown): Promise<string | undefined> {
    return housekeeping.deleteRun(this.state, id);
  }

  /** Removes the worktree folders of runs finished more than `worktreeRetentionDays` ago (run-housekeeping.ts). */
  sweepWorktrees(): Promise<void> {
    return housekeeping.sweepWorktrees(this.state);
  }

  /** The run branches of a project, with the title of the run each belongs to and whether it is in use. */
  listRunBranches(projectId: unknown): Promise<RunBranch[]> {
    return housekeeping.listProjectRunBranches(this.state, projectId);
  }

  /** Deletes one run branch, or every one whose commits are all on other branches (`merged`); never one of a run that is not finished. */
  deleteRunBranches(projectId: unknown, which: unknown): Promise<string[]> {
    return housekeeping.deleteProjectRunBranches(this.state, projectId, which);
  }

  /** Records a pull request's merge or close on the runs that opened or updated it; returns the ids of the runs changed. */
  markPullRequest(repository: string, number: number, state: NonNullable<PullRequestRef['state']>): Promise<string[]> {
    return housekeeping.markPullRequest(this.state, repository, number, state);
  }

  /**
   * Stops: no new run starts; running steps are stopped and their runs end as failed with the
   * error `interrupted` (retryable), as after a crash; pending log lines and events go out.
   */
  async stop(): Promise<void> {
    this.state.stopping = true;
    clearInterval(this.sweepTimer);
    this.state.rateLimitTimers.stop();
    await Promise.all(this.state.retiring.values());
    const active = [...this.queue.active.values()];
    for (const { controller } of active) controller.abort();
    await Promise.all(active.map(({ done }) => done));
    await this.state.logs.stop();
    await this.state.options.store.close();
    await this.state.budget.flush();
    this.state.options.pacer.flush();
  }

  /** Dollars agents spent today (local calendar day): what Settings.spendLimitUsdPerDay is compared with. */
  spentTodayUsd(): number {
    return this.state.budget.spentToday();
  }
}

/** Freezes a JSON value and everything in it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
