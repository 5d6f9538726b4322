// The run service: starts, queues, drives, approves, cancels, retries and deletes runs.
//
// A run's life: queued → running (workspace, then steps in order) → waiting (an approval step;
// the run gives up its slot) → queued again once approved → ... → succeeded | failed |
// cancelled | rejected. A new run is durable before startRun resolves (the run store's journal);
// after that it is written before it does anything outside Factory, and when it waits or finishes.
// Active runs (queued, running, waiting) are kept whole in memory; finished runs are kept slim
// (no outputs, prompts or pipeline snapshot) and read from disk by getRun.

import { resolve } from 'node:path';
import { snapshotRunCount, type ApprovalDecider, type Issue, type LogLine, type Pipeline, type Project, type PullRequestRef, type Run, type RunBranch, type RunFollowUp, type StepRun } from '../core/api';
import { ConflictError, NotFoundError, ValidationError, errorMessage, quote } from '../core/errors';
import { findFailureCause } from '../core/failure-cause';
import { newRunId } from '../core/ids';
import {
  copyRun, isFinished, matchesFilter, resolveSelection, selectedLabels, slimRun, validateRunFilter, validateStartRequest, type StoredStepRun,
} from '../core/runs';
import { stepEnvironment, type TemplateContext } from '../core/template';
import type { RunStore } from '../store/run-store';
import type { EventPacer } from './pacer';
import type { ConfigService } from './config';
import { buildStepEnvironment } from './environment';
import { BudgetKeeper } from './budget';
import { SpendFile } from '../store/spend-file';
import type { EventHub } from './events';
import { RunLogs } from './run-logs';
import { recoverRuns } from './recovery';
import { runProcess } from './process';
import type { EarlierAgentWork, StepOutcome, StepRunners } from './steps';
import { agentWorkOf, earlierRunsOnBranch } from './follow-up-session';
import { deleteRunBranch, listRunBranches, retireWorkspace } from './kept-work';
import { worktreeBranch, worktreePath, type CommandRunner } from './workspace';
import { defaultSshSetup, executionRunner, type ExecutionRunner } from './runner';
import type { SshSetup } from './ssh';
import { allRunners } from '../core/runners';
import { chooseRunner } from '../core/runner-choice';
import type { AgentStep, StepUsage } from '../core/api';
import {
  RateLimitTimers, addUsage, clearLiveness, clockWords, decideRateLimitWait, isRateLimitWait, markRateLimitWait, rateLimitHistory, releaseRateLimitWait, takeContinuation, totalUsage,
} from './rate-limit-waits';

export const defaultStepTimeoutSec = 3600;

/**
 * The merged or closed pull request of the run's branch, in words (`pull request #3 (merged)`): its
 * commits are on GitHub, so the branch counts as pushed. Undefined while it is open or unknown.
 */
export function proposedWork(run: Readonly<Run>): string | undefined {
  const branch = worktreeBranch(run.id);
  const pull = run.steps.find((step) => step.pullRequest?.branch === branch && (step.pullRequest.state === 'merged' || step.pullRequest.state === 'closed'))?.pullRequest;
  return pull ? `pull request #${pull.number} of ${pull.repository} (${pull.state})` : undefined;
}

/** Calls every listener with `event`; one that throws is reported and does not stop the others. */
function tellEach<E extends { type: string }>(listeners: ReadonlySet<(event: E) => void>, event: E): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch (error) {
      console.error(`A run ${event.type} subscriber failed:`, error);
    }
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

/**
 * What happens to a run, with the run as it is then (the live object: read it at once, never keep
 * or change it). `started`: it goes running (`resumed` when an approval let it go on); `step-waiting`:
 * an approval step waits; `finished`: it ended (the full run, outputs and pipeline snapshot included).
 * Notices, the inbox and write-back subscribe to these; nobody re-reads run.json to learn of them.
 */
export type RunLifecycleEvent =
  | { type: 'started'; run: Readonly<Run>; resumed: boolean }
  | { type: 'step-waiting'; run: Readonly<Run>; step: Readonly<StepRun> }
  /** An agent step began or stopped being stalled, or waits out the model's usage limit (write-back shows it). */
  | { type: 'step-liveness'; run: Readonly<Run>; step: Readonly<StepRun> }
  | { type: 'finished'; run: Readonly<Run> };

/**
 * A step attempt began or ended (an approval when it was decided), with the live run and step: read
 * them at once. What a Linear agent session shows step by step (triggers/linear-agent.ts).
 */
export interface RunStepEvent {
  type: 'step-started' | 'step-finished';
  run: Readonly<Run>;
  step: Readonly<StepRun>;
}

export interface RunServiceOptions {
  store: RunStore;
  config: ConfigService;
  hub: EventHub;
  pacer: EventPacer;
  runners: StepRunners;
  worktreesDir: string;
  /** The user's environment that steps start from (process.env); Factory's own values are removed. */
  environment?: NodeJS.ProcessEnv;
  /** Every secret Factory holds now (remote token, webhook secrets, tokens): never given to a step. */
  secrets?: () => string[];
  /** A link to the run in the UI (remote access), for templates and notices. */
  runUrl?: (runId: string) => string | undefined;
  now?: () => number;
  /** Agent budgets and the day's spend (engine/budget.ts); default: the daily spend kept in memory only. */
  budget?: BudgetKeeper;
  /** How ssh runners are reached (engine/runner.ts); default a private socket folder and the user's known hosts. */
  ssh?: () => Promise<SshSetup>;
}

/** Where a run comes from, past the public start request: its trigger, and the pull request it follows up. */
export interface RunOrigin {
  triggerId?: string;
  followUp?: RunFollowUp;
  /** The Linear agent session the run reports to (an agent trigger's run). */
  agentSessionId?: string;
}

interface ActiveRun {
  controller: AbortController;
  done: Promise<void>;
}

export class RunService {
  private readonly runs = new Map<string, Run>();
  /** Run ids, oldest first (ids sort by creation). */
  private order: string[] = [];
  /** Ids of queued runs, oldest first: what `pump` looks at (never all runs). */
  private queue: string[] = [];
  private readonly active = new Map<string, ActiveRun>();
  private readonly logs: RunLogs;
  /** Worktrees being removed by retention, by run id: a retry or a delete waits for them. */
  private readonly retiring = new Map<string, Promise<void>>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly lifecycleListeners = new Set<(event: RunLifecycleEvent) => void>();
  private readonly stepListeners = new Set<(event: RunStepEvent) => void>();
  /** Guidance for an agent step about to start (text a person sent while the run worked), by run and step. */
  private guidanceSource: ((run: Readonly<Run>, stepId: string) => string | undefined) | undefined;
  /** Runs a crash interrupted (failed at open), announced as finished by `start`. */
  private interrupted: Run[] = [];
  /** Runs whose approval let them go on: their next start is a resumption. */
  private readonly resuming = new Set<string>();
  /** Called with a run before it is deleted (the trigger service keeps its dedup key). */
  private beforeDelete: ((run: Run) => Promise<void>) | undefined;
  /** Frozen pipeline snapshots for new runs, by the configuration's pipeline object. */
  private readonly snapshots = new WeakMap<Pipeline, Pipeline>();
  private readonly now: () => number;
  private readonly runCommand: CommandRunner = (options) => runProcess(options);
  private readonly budget: BudgetKeeper;
  /** Steps waiting out the model's usage limit go on at their resumeAt (rate-limit-waits.ts). */
  private readonly rateLimitTimers: RateLimitTimers;
  private readonly sshSetup: () => Promise<SshSetup>;

  private constructor(private readonly options: RunServiceOptions) {
    this.now = options.now ?? Date.now;
    this.budget = options.budget ?? new BudgetKeeper({ spend: SpendFile.inMemory(), dailyLimit: () => options.config.settings.spendLimitUsdPerDay, now: this.now });
    this.rateLimitTimers = new RateLimitTimers(this.now);
    this.sshSetup = options.ssh ?? defaultSshSetup();
    this.logs = new RunLogs(options.store, () => options.pacer.logsReady(() => this.logs.take()));
  }

  /**
   * Loads the runs on disk and recovers from a stop or crash (DESIGN §4, recovery.ts). Nothing
   * starts before `start`. Returns the problems met while reading (unreadable run files are
   * skipped, not deleted).
   */
  static async open(options: RunServiceOptions): Promise<{ service: RunService; problems: string[] }> {
    const service = new RunService(options);
    const { runs, problems } = await options.store.loadAll((run) => (isFinished(run.status) ? slimRun(run) : run));
    service.interrupted = await recoverRuns(runs, service.now(), (run) => options.store.save(run));
    for (const run of runs) {
      service.runs.set(run.id, isFinished(run.status) ? slimRun(run) : run);
      service.order.push(run.id);
      if (run.status === 'queued') service.queue.push(run.id);
    }
    return { service, problems };
  }

  /** Announces the runs a crash interrupted (as `finished`) to the subscribers, then starts queued runs. */
  start(): void {
    for (const run of this.interrupted) this.announce({ type: 'finished', run });
    this.interrupted = [];
    this.options.config.subscribe(() => {
      this.releaseDailyPauses();
      this.pump();
    });
    // A step that waited out the model's usage limit before a restart goes on at its resumeAt.
    for (const run of this.runs.values()) for (const step of run.status === 'waiting' ? run.steps : []) if (isRateLimitWait(step)) this.armRateLimit(run, step);
    this.stopRemoteLeftovers();
    this.pump();
    // Finished runs' worktrees past their time go now, and then once an hour.
    const sweep = () => void this.sweepWorktrees().catch((error) => console.error(`Sweeping worktrees failed: ${errorMessage(error)}`));
    this.sweepTimer = setInterval(sweep, 3600_000);
    this.sweepTimer.unref();
    setImmediate(sweep);
  }

  /** Subscribes to run lifecycle events; returns the unsubscribe function. */
  onLifecycle(listener: (event: RunLifecycleEvent) => void): () => void {
    this.lifecycleListeners.add(listener);
    return () => this.lifecycleListeners.delete(listener);
  }

  /** Subscribes to step starts and ends; returns the unsubscribe function. */
  onStep(listener: (event: RunStepEvent) => void): () => void {
    this.stepListeners.add(listener);
    return () => this.stepListeners.delete(listener);
  }

  /** Installs where agent steps get guidance: text appended to the step's rendered prompt. */
  setGuidanceSource(source: (run: Readonly<Run>, stepId: string) => string | undefined): void {
    this.guidanceSource = source;
  }

  /** Appends a line to the run's own log (the setup log), e.g. what write-back did. */
  logRunNote(runId: string, line: string): void {
    if (this.runs.has(runId)) this.logs.note(runId, line);
  }

  // ─── Reading ───

  listRuns(filterInput?: unknown): Run[] {
    const filter = validateRunFilter(filterInput);
    const found: Run[] = [];
    for (let index = this.order.length - 1; index >= 0 && found.length < filter.limit; index--) {
      const run = this.runs.get(this.order[index]!)!;
      if (matchesFilter(run, filter)) found.push(slimRun(run));
    }
    return found;
  }

  /** Every run, oldest first, as kept in memory (slim when finished). Treat as read-only. */
  *allRuns(): Iterable<Run> {
    for (const id of this.order) yield this.runs.get(id)!;
  }

  /** Installs the hook called before a run is deleted. */
  onBeforeDelete(hook: (run: Run) => Promise<void>): void {
    this.beforeDelete = hook;
  }

  /** The latest runs for the snapshot, slim. */
  latestRuns(): Run[] {
    return this.listRuns({ limit: snapshotRunCount });
  }

  /** The full run: outputs, rendered prompts and the pipeline snapshot; undefined for an unknown id. */
  async getRun(id: unknown): Promise<Run | undefined> {
    if (typeof id !== 'string') throw new ValidationError(`getRun takes a run id, not ${quote(id)}`);
    const run = this.runs.get(id);
    if (!run) return undefined;
    if (!isFinished(run.status)) return copyRun(run);
    const stored = await this.options.store.read(id);
    // The budget ledger is the engine's (core/runs.ts StoredStepRun), as in copyRun.
    for (const step of (stored?.steps ?? []) as StoredStepRun[]) delete step.budgetLedger;
    return stored ?? run;
  }

  /** A page of one step attempt's log (default: the latest attempt, its last 1,000 lines; see LogPage). */
  async readStepLog(runId: unknown, stepId: unknown, attempt?: unknown, page?: unknown): Promise<LogLine[]> {
    const { run, step, wanted } = this.locateLog(runId, stepId, attempt);
    return wanted === 0 ? [] : this.logs.read(run.id, step.id, wanted, page);
  }

  /** A page of the run's setup log. */
  async readRunLog(runId: unknown, page?: unknown): Promise<LogLine[]> {
    return this.logs.read(this.requireRun(runId).id, '', 0, page);
  }

  /** The whole log of a step attempt ('' for setup), for a download: its file, or its lines (older logs). */
  async logDownload(runId: unknown, stepId: unknown, attempt?: unknown): Promise<{ path: string } | { lines: string[] } | undefined> {
    if (stepId === '') return this.options.store.logDownload(this.requireRun(runId).id, '', 0);
    const { run, step, wanted } = this.locateLog(runId, stepId, attempt);
    return wanted === 0 ? undefined : this.options.store.logDownload(run.id, step.id, wanted);
  }

  private locateLog(runId: unknown, stepId: unknown, attempt: unknown): { run: Run; step: StepRun; wanted: number } {
    const run = this.requireRun(runId);
    const step = this.requireStep(run, stepId);
    if (attempt === undefined || attempt === null) return { run, step, wanted: step.attempt };
    if (!Number.isInteger(attempt) || (attempt as number) < 1) throw new ValidationError(`attempt must be a whole number from 1, not ${quote(attempt)}`);
    return { run, step, wanted: attempt as number };
  }

  // ─── Starting and deciding ───

  /** Validates, snapshots the pipeline, writes the run durably, queues it; returns it as queued. */
  async startRun(input: unknown, origin: RunOrigin = {}): Promise<Run> {
    const run = await this.createRun(input, origin);
    const queued = copyRun(run);
    this.admit(run);
    return queued;
  }

  /** startRun without the copy of the run: resolves with its id (what a webhook delivery needs). */
  async queueRun(input: unknown, origin: RunOrigin = {}): Promise<string> {
    const run = await this.createRun(input, origin);
    this.admit(run);
    return run.id;
  }

  /** A new run from a start request, written durably (not yet known to the service). */
  private async createRun(input: unknown, origin: RunOrigin): Promise<Run> {
    if (this.stopping) throw new ConflictError('Factory is stopping; the run was not started');
    const request = validateStartRequest(input);
    const pipeline = this.options.config.getPipeline(request.pipelineId);
    const { current } = this.options.config;
    const { runnerId } = chooseRunner({
      trigger: current.triggers.find((trigger) => trigger.id === origin.triggerId), pipeline,
      project: current.projects.find((project) => project.id === pipeline.projectId), runners: current.runners,
    });
    const run: Run = {
      id: newRunId(this.now()),
      pipelineId: pipeline.id,
      pipelineName: pipeline.name,
      projectId: pipeline.projectId,
      ...(origin.triggerId ? { triggerId: origin.triggerId } : {}),
      ...(origin.followUp ? { followUp: origin.followUp } : {}),
      ...(origin.agentSessionId ? { agentSessionId: origin.agentSessionId } : {}),
      ...(request.issue ? { issue: request.issue } : {}),
      variables: { ...pipeline.variables, ...request.variables },
      status: 'queued',
      createdAt: this.now(),
      steps: pipeline.steps.map((step): StepRun => ({ id: step.id, name: step.name, kind: step.kind, status: 'pending', attempt: 0 })),
      pipeline: this.snapshotOf(pipeline),
      runnerId,
    };
    await this.options.store.create(run);
    return run;
  }

  /** Makes a durable new run known, announces it and queues it. */
  private admit(run: Run): void {
    this.runs.set(run.id, run);
    this.order.push(run.id);
    this.enqueue(run.id);
    this.changed(run);
    this.pump();
  }

  /** `by` is internal (the doors and trigger surfaces name who decided); it is recorded on the approval. */
  async approveStep(runId: unknown, stepId: unknown, approved: unknown, comment?: unknown, selected?: unknown, by?: ApprovalDecider): Promise<void> {
    const run = this.requireRun(runId);
    const stepRun = this.requireStep(run, stepId);
    if (typeof approved !== 'boolean') throw new ValidationError(`approved must be true or false, not ${quote(approved)}`);
    if (comment !== undefined && comment !== null && (typeof comment !== 'string' || comment.length > 10_000)) {
      throw new ValidationError(`comment must be text of up to 10,000 characters, not ${quote(comment)}`);
    }
    if (stepRun.status !== 'waiting') {
      // The loser of two answers is told who won (issue 26).
      const decided = stepRun.approval?.by ? `: already decided by ${stepRun.approval.by.name} via ${stepRun.approval.by.via}` : '';
      throw new ConflictError(`Step \`${stepRun.id}\` of run \`${run.id}\` is not waiting for approval (it is ${stepRun.status})${decided}`);
    }
    if (stepRun.budgetStop) return this.decideBudget(run, stepRun, approved);
    const step = run.pipeline!.steps.find((candidate) => candidate.id === stepRun.id);
    if (isRateLimitWait(stepRun) && step?.kind === 'agent') return this.decideRateLimitWait(run, stepRun, step, approved, typeof comment === 'string' ? comment.trim() : '');
    if (step?.kind !== 'approval') throw new ConflictError(`Step \`${stepRun.id}\` is not an approval step`);
    const at = this.now();
    const text = typeof comment === 'string' && comment.trim() ? comment : undefined;
    if (approved) {
      const chosen = resolveSelection(step, selected);
      stepRun.approval = { approved: true, ...(text ? { comment: text } : {}), ...(chosen ? { selected: chosen } : {}), at, ...(by ? { by } : {}) };
      Object.assign(stepRun, { status: 'succeeded', finishedAt: at });
      this.announceStep({ type: 'step-finished', run, step: stepRun });
      await this.goOn(run);
    } else {
      stepRun.approval = { approved: false, ...(text ? { comment: text } : {}), at, ...(by ? { by } : {}) };
      Object.assign(stepRun, { status: 'rejected', finishedAt: at });
      this.announceStep({ type: 'step-finished', run, step: stepRun });
      await this.finish(run, 'rejected', `Rejected at step \`${stepRun.id}\`${text ? `: ${text}` : ''}`);
    }
  }

  /** Cancels a queued, running or waiting run; resolves once it has stopped. */
  async cancelRun(id: unknown): Promise<void> {
    const run = this.requireRun(id);
    if (isFinished(run.status)) throw new ConflictError(`Run \`${run.id}\` is already ${run.status}; only queued, running or waiting runs can be cancelled`);
    const active = this.active.get(run.id);
    if (active && run.status === 'running') {
      active.controller.abort();
      await active.done;
      return;
    }
    // A run that just began to wait may still be writing that down: let it finish first.
    if (active) await active.done;
    if (isFinished(run.status)) return;
    for (const step of run.steps) if (step.status === 'waiting') Object.assign(step, { status: 'cancelled', finishedAt: this.now() });
    await this.finish(run, 'cancelled');
  }

  /** Queues a finished run again, from the start or from `fromStepId`; earlier steps keep their results. */
  async retryRun(id: unknown, fromStepId?: unknown): Promise<Run> {
    const slim = this.requireRun(id);
    if (!isFinished(slim.status)) throw new ConflictError(`Run \`${slim.id}\` is ${slim.status}; only a finished run can be retried`);
    await this.retiring.get(slim.id);
    let from = 0;
    if (fromStepId !== undefined && fromStepId !== null && fromStepId !== '') {
      this.requireStep(slim, fromStepId);
      from = slim.steps.findIndex((step) => step.id === fromStepId);
    }
    const run = await this.options.store.read(slim.id);
    if (!run?.pipeline) throw new ConflictError(`Run \`${slim.id}\` cannot be read from disk, so it cannot be retried`);
    // Still the same finished run? (Its entry may have been made slim meanwhile, which is no change.)
    const current = this.runs.get(slim.id);
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
    this.runs.set(run.id, run);
    // Queued only once written: a pump meanwhile (another run ending) must not start it before
    // its retry is on disk, nor change it before the caller gets its copy. A failed write leaves
    // the run as it was, finished.
    try {
      await this.options.store.save(run);
    } catch (error) {
      if (this.runs.get(run.id) === run) this.runs.set(run.id, current);
      throw error;
    }
    this.enqueue(run.id);
    this.changed(run);
    const queued = copyRun(run);
    this.pump();
    return queued;
  }

  /**
   * Deletes a finished run: its files and its logs. Its worktree goes, but not its work (kept-work.ts):
   * resolves with what was kept, in words, for a run that had a worktree or a kept branch.
   */
  async deleteRun(id: unknown): Promise<string | undefined> {
    const run = this.requireRun(id);
    if (!isFinished(run.status)) throw new ConflictError(`Run \`${run.id}\` is ${run.status}; cancel it before deleting it`);
    await this.retiring.get(run.id);
    await this.beforeDelete?.(run);
    this.runs.delete(run.id);
    this.order = this.order.filter((candidate) => candidate !== run.id);
    this.options.pacer.forgetRun(run.id);
    const project = this.options.config.current.projects.find((candidate) => candidate.id === run.projectId);
    let kept: string | undefined;
    if (project?.worktrees && (run.workspace || run.branch)) {
      const lines: string[] = [];
      const retired = await retireWorkspace({ ...this.worktreeOptions(run, project), log: (line) => lines.push(line) });
      kept = retired?.message ?? `the worktree ${worktreePath(this.options.worktreesDir, run.id)} was left in place: ${lines.at(-1) ?? 'git failed'}`;
      console.log(`Deleted ${run.id}: ${kept}`);
    }
    await this.options.store.delete(run.id);
    this.options.hub.emit('run-deleted', run.id);
    return kept;
  }

  /**
   * Removes the worktree folders of runs finished more than `worktreeRetentionDays` ago (their work
   * kept on their branches), one run at a time; a retry meanwhile waits. The run then names its
   * branch and has no workspace: a retry makes the worktree again from that branch.
   */
  async sweepWorktrees(): Promise<void> {
    const days = this.options.config.settings.worktreeRetentionDays;
    if (!days || this.stopping) return;
    const before = this.now() - days * 24 * 3600_000;
    const root = resolve(this.options.worktreesDir);
    for (const slim of [...this.runs.values()]) {
      const project = this.options.config.current.projects.find((candidate) => candidate.id === slim.projectId);
      // A run whose pull request was merged or closed has its work on GitHub: its worktree goes now.
      const proposed = proposedWork(slim);
      if (!isFinished(slim.status) || !project?.worktrees || !slim.workspace?.startsWith(root) || (!proposed && (slim.finishedAt ?? Infinity) > before)) continue;
      const retiring = (async () => {
        const retired = await retireWorkspace({ ...this.worktreeOptions(slim, project), ...(proposed ? { pushedAs: proposed } : {}), log: (line) => this.logs.note(slim.id, line) });
        const run = retired && this.runs.get(slim.id) === slim ? await this.options.store.read(slim.id) : undefined;
        if (!retired || !run) return;
        delete run.workspace;
        if (retired.keptBranch) run.branch = retired.keptBranch;
        this.logs.note(run.id, proposed ? `Worktree removed (the work is in ${proposed}): ${retired.message}` : `Worktree removed after ${days} days: ${retired.message}`);
        await this.options.store.save(run);
        this.runs.set(run.id, slimRun(run));
        this.changed(run);
      })();
      this.retiring.set(slim.id, retiring);
      await retiring.catch((error) => console.error(`Removing the worktree of ${slim.id} failed: ${errorMessage(error)}`)).finally(() => this.retiring.delete(slim.id));
    }
  }

  /** The run branches of a project, with the title of the run each belongs to and whether it is in use. */
  async listRunBranches(projectId: unknown): Promise<RunBranch[]> {
    const branches = await listRunBranches(this.options.config.getProject(projectId), this.gitEnvironment(), this.runCommand);
    return branches.map((branch) => {
      const run = this.runs.get(branch.runId);
      const inUse = run !== undefined && (!isFinished(run.status) || run.workspace !== undefined);
      // A branch whose pull request was merged or closed counts as pushed: GitHub has its commits.
      const pushed = branch.pushed || (run !== undefined && proposedWork(run) !== undefined);
      return run ? { ...branch, pushed, runTitle: run.issue?.title ?? run.pipelineName, inUse } : { ...branch, inUse };
    });
  }

  /** Deletes one run branch, or every one whose commits are all on other branches (`merged`); never one of a run that is not finished. */
  async deleteRunBranches(projectId: unknown, which: unknown): Promise<string[]> {
    const project = this.options.config.getProject(projectId);
    const branches = await listRunBranches(project, this.gitEnvironment(), this.runCommand);
    const chosen = which === 'merged' ? branches.filter((branch) => branch.ahead === 0) : branches.filter((branch) => branch.branch === which);
    if (which !== 'merged' && chosen.length === 0) throw new NotFoundError(`Project ${quote(project.name)} has no run branch ${quote(which)}`);
    const deleted: string[] = [];
    for (const { branch, runId } of chosen) {
      const run = this.runs.get(runId);
      if (run && !isFinished(run.status)) {
        if (which === 'merged') continue;
        throw new ConflictError(`Run \`${runId}\` is ${run.status}: its branch is in use`);
      }
      if (run?.workspace) {
        if (which === 'merged') continue;
        throw new ConflictError(`Run \`${runId}\` still has its worktree: delete the run (its work is kept) or wait for the worktree to be removed`);
      }
      await deleteRunBranch(project, branch, this.gitEnvironment(), this.runCommand).catch((error) => {
        throw new ConflictError(errorMessage(error));
      });
      deleted.push(branch);
      if (run?.branch === branch) {
        const full = await this.options.store.read(runId);
        if (full) {
          delete full.branch;
          await this.options.store.save(full);
          this.runs.set(runId, slimRun(full));
          this.changed(full);
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
  async markPullRequest(repository: string, number: number, state: NonNullable<PullRequestRef['state']>): Promise<string[]> {
    const isIt = (step: StepRun) => step.pullRequest !== undefined && step.pullRequest.state !== 'merged' && step.pullRequest.number === number && step.pullRequest.repository.toLowerCase() === repository.toLowerCase();
    const changed: string[] = [];
    for (const id of [...this.order]) {
      const run = this.runs.get(id);
      if (!run?.steps.some((step) => isIt(step) && step.pullRequest!.state !== state)) continue;
      const finished = isFinished(run.status);
      const target = finished ? await this.options.store.read(id) : run;
      if (!target || this.runs.get(id) !== run) continue; // deleted or changed meanwhile: the next event or poll says it again
      for (const step of target.steps) if (isIt(step)) step.pullRequest = { ...step.pullRequest!, state };
      await this.options.store.save(target);
      if (finished) this.runs.set(id, slimRun(target));
      this.changed(target);
      changed.push(id);
    }
    return changed;
  }

  private worktreeOptions(run: Run, project: Project) {
    return { project, runId: run.id, ...(run.issue?.title ? { title: run.issue.title } : {}), worktreesDir: this.options.worktreesDir, env: this.gitEnvironment(), run: this.runCommand };
  }

  private gitEnvironment(): Record<string, string> {
    return buildStepEnvironment(this.baseEnvironment(), this.secrets());
  }

  /**
   * Stops: no new run starts; running steps are stopped and their runs end as failed with the
   * error `interrupted` (retryable), as after a crash; pending log lines and events go out.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.sweepTimer);
    this.rateLimitTimers.stop();
    await Promise.all(this.retiring.values());
    const active = [...this.active.values()];
    for (const { controller } of active) controller.abort();
    await Promise.all(active.map(({ done }) => done));
    await this.logs.stop();
    await this.options.store.close();
    await this.budget.flush();
    this.options.pacer.flush();
  }

  /** Dollars agents spent today (local calendar day): what Settings.spendLimitUsdPerDay is compared with. */
  spentTodayUsd(): number {
    return this.budget.spentToday();
  }

  /**
   * A person decided on an agent step paused at a budget cap: approved, it goes on (the cap raised
   * by its amount unless `raise` is false, its session resumed, engine/budget.ts); rejected, it
   * fails with the budget in words and the run follows continueOnError. The status changes before
   * any await, so a second decision finds the step no longer waiting.
   */
  private async decideBudget(run: Run, stepRun: StoredStepRun, approved: boolean, raise = true): Promise<void> {
    const goesOn = approved || run.pipeline!.steps.find((candidate) => candidate.id === stepRun.id)?.continueOnError === true;
    if (approved) {
      this.budget.approve(stepRun, raise);
      stepRun.status = 'pending';
    } else {
      Object.assign(stepRun, { status: 'failed', error: this.budget.rejection(run, stepRun), finishedAt: this.now() });
      delete stepRun.budgetStop;
    }
    if (!goesOn) return this.finish(run, 'failed', `Step \`${stepRun.id}\` failed: ${stepRun.error}`);
    await this.goOn(run);
  }

  /** A waiting run that was let go on: queued again (ahead of newer runs), written, started when a slot is free. */
  private async goOn(run: Run): Promise<void> {
    run.status = 'queued';
    this.resuming.add(run.id);
    this.enqueue(run.id);
    this.changed(run);
    await this.options.store.save(run);
    this.pump();
  }

  /** Agent steps paused at the daily spend limit go on once it lets them (raised or removed in Settings). */
  private releaseDailyPauses(): void {
    for (const run of this.runs.values()) {
      if (run.status !== 'waiting') continue;
      const paused = (run.steps as StoredStepRun[]).find((step) => step.status === 'waiting' && this.budget.dailyReleased(step));
      if (paused) void this.decideBudget(run, paused, true, false).catch((error) => console.error(`Run ${run.id} could not go on: ${errorMessage(error)}`));
    }
  }

  // ─── Scheduling ───

  /** Starts queued runs, oldest first, while the global and per-pipeline caps allow. */
  private pump(): void {
    if (this.stopping) return;
    const cap = this.options.config.settings.maxParallelRuns;
    if (this.active.size >= cap) return;
    const runningByPipeline = new Map<string, number>();
    const runningByRunner = new Map<string, number>();
    for (const id of this.active.keys()) {
      const { pipelineId, runnerId = 'local' } = this.runs.get(id)!;
      runningByPipeline.set(pipelineId, (runningByPipeline.get(pipelineId) ?? 0) + 1);
      runningByRunner.set(runnerId, (runningByRunner.get(runnerId) ?? 0) + 1);
    }
    for (const id of [...this.queue]) {
      if (this.active.size >= cap) break;
      const run = this.runs.get(id);
      if (run?.status !== 'queued') {
        this.dequeue(id); // cancelled or deleted while queued
        continue;
      }
      const pipelineCap = this.currentPipeline(run)?.maxParallelRuns ?? run.pipeline?.maxParallelRuns;
      const running = runningByPipeline.get(run.pipelineId) ?? 0;
      if (pipelineCap !== undefined && running >= pipelineCap) continue;
      const runnerId = run.runnerId ?? 'local';
      const runnerCap = this.options.config.current.runners.find((runner) => runner.id === runnerId)?.maxParallelRuns;
      const onRunner = runningByRunner.get(runnerId) ?? 0;
      if (runnerCap !== undefined && onRunner >= runnerCap) continue;
      runningByPipeline.set(run.pipelineId, running + 1);
      runningByRunner.set(runnerId, onRunner + 1);
      this.dequeue(id);
      this.execute(run);
    }
  }

  /** Adds a run id to the queue in creation order (an approved run goes ahead of newer ones). */
  private enqueue(id: string): void {
    let low = 0;
    let high = this.queue.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.queue[middle]! < id) low = middle + 1;
      else high = middle;
    }
    if (this.queue[low] !== id) this.queue.splice(low, 0, id);
  }

  private dequeue(id: string): void {
    const index = this.queue.indexOf(id);
    if (index >= 0) this.queue.splice(index, 1);
  }

  private execute(run: Run): void {
    const controller = new AbortController();
    run.status = 'running';
    run.startedAt ??= this.now();
    this.changed(run);
    this.announce({ type: 'started', run, resumed: this.resuming.delete(run.id) });
    const entry: ActiveRun = { controller, done: Promise.resolve() };
    entry.done = this.drive(run, controller.signal)
      .catch(async (error) => {
        console.error(`Run ${run.id} failed unexpectedly:`, error);
        await this.finish(run, 'failed', `Internal error: ${errorMessage(error)}`).catch(() => undefined);
      })
      .finally(() => {
        // An approved run may already be driven again by a newer entry: remove only our own.
        if (this.active.get(run.id) === entry) this.active.delete(run.id);
        this.pump();
      });
    this.active.set(run.id, entry);
  }

  /** Runs the workspace setup (first time only) and the pending steps, in order. */
  private async drive(run: Run, signal: AbortSignal): Promise<void> {
    const pipeline = run.pipeline!;
    const project = this.options.config.current.projects.find((candidate) => candidate.id === run.projectId);
    if (!project) return this.finish(run, 'failed', `The project of pipeline ${quote(run.pipelineName)} no longer exists`);
    // The run is written as running before anything it does outside Factory (a worktree, a setup
    // command, a step's process), so a crash meanwhile ends it as interrupted; an approval step
    // does nothing outside, and is written once it waits.
    if (!run.workspace && (project.worktrees || project.setupCommand?.trim())) await this.options.store.save(run);

    const execution = this.executionFor(run);
    if (!execution) return this.finish(run, 'failed', `The runner ${quote(run.runnerId)} no longer exists: choose another in the project, pipeline or trigger and retry`);

    if (!run.workspace) {
      try {
        run.workspace = await execution.prepare({
          project, runId: run.id, worktreesDir: this.options.worktreesDir, signal, run: this.runCommand,
          ...(run.followUp ? { followUp: { remote: run.followUp.remote ?? 'origin', branch: run.followUp.branch } } : {}),
          env: buildStepEnvironment(this.baseEnvironment(), this.secrets(), stepEnvironment(this.templateContext(run, project, project.path))),
          log: (line, stream) => this.log(run.id, '', 0, line, stream),
        });
      } catch (error) {
        await this.logs.end(run.id, '', 0);
        if (signal.aborted) return this.stopped(run);
        return this.finish(run, 'failed', `Setup failed: ${errorMessage(error)}`);
      }
      await this.logs.end(run.id, '', 0);
      delete run.branch; // the worktree is back (made again from the kept branch)
      this.changed(run);
    }

    let earlier: Promise<EarlierAgentWork | undefined> | undefined;
    for (let index = 0; index < run.steps.length; index++) {
      const stepRun = run.steps[index]!;
      if (stepRun.status !== 'pending') continue;
      if (signal.aborted) return this.stopped(run);
      const step = pipeline.steps[index]!;
      // onStall 'retry' with no retries set still tries once more.
      const attempts = step.kind === 'approval' ? 1 : (step.retries ?? (step.kind === 'agent' && step.onStall === 'retry' ? 1 : 0)) + 1;
      for (let tried = 0; tried < attempts; tried++) {
        // After the model's usage limit the attempt goes on: same number, same log, its session and usage kept.
        const continuing = takeContinuation(stepRun);
        const carried = continuing ? stepRun.usage : undefined;
        const attempt = continuing ? stepRun.attempt : stepRun.attempt + 1;
        if (!continuing) for (const key of ['finishedAt', 'exitCode', 'error', 'output', 'usage', 'approval', 'prompt', 'systemPrompt', 'message', 'sessionId', 'cause'] as const) delete stepRun[key];
        Object.assign(stepRun, { attempt, status: 'running' }, continuing ? {} : { startedAt: this.now() });
        if (!continuing) this.logs.begin(run.id, step.id, attempt);
        this.changed(run);
        this.announceStep({ type: 'step-started', run, step: stepRun });
        if (step.kind !== 'approval') await this.options.store.save(run); // after a crash, the step that was running is known
        const timeoutMs = (step.timeoutSec ?? defaultStepTimeoutSec) * 1000;
        const template = this.templateContext(run, project, run.workspace);
        if (step.kind === 'agent' && run.followUp) earlier ??= this.earlierAgentWork(run);
        const earlierWork = step.kind === 'agent' ? await earlier : undefined;
        const guidance = step.kind === 'agent' ? this.guidanceSource?.(run, step.id) : undefined;
        let outcome: StepOutcome = await this.options.runners[step.kind]({
          runId: run.id, run, step, attempt, workspace: run.workspace, template, timeoutMs, signal,
          defaults: { ...(pipeline.harnessId ? { harnessId: pipeline.harnessId } : {}), ...(pipeline.model ? { model: pipeline.model } : {}) },
          ...(earlierWork ? { earlier: earlierWork } : {}),
          ...(step.kind === 'agent' ? { budget: this.budget.watch(run, stepRun, (line) => this.log(run.id, step.id, attempt, line, 'info')) } : {}),
          ...(continuing ? { continueSession: stepRun.sessionId ? { sessionId: stepRun.sessionId } : {} } : {}),
          ...(guidance ? { guidance } : {}),
          environment: buildStepEnvironment(this.baseEnvironment(), this.secrets()),
          secrets: this.secrets(),
          log: (line, stream) => this.log(run.id, step.id, attempt, line, stream),
          output: (chunk, stream) => this.logs.output(run.id, step.id, attempt, chunk, stream),
          exec: (processOptions, needs) => execution.exec(processOptions, { key: `${run.id}.${step.id}`, ...needs }),
          remote: execution.remote,
          record: (details) => {
            const wasStalled = stepRun.liveness === 'stalled';
            Object.assign(stepRun, details);
            this.changed(run);
            if (details.liveness && (details.liveness === 'stalled') !== wasStalled) this.announce({ type: 'step-liveness', run, step: stepRun });
            // The session is what a follow-up resumes: written at once, so it outlives a crash.
            if (details.sessionId) this.options.store.save(run).catch(() => undefined);
          },
          recordPullRequest: async (pullRequest) => {
            stepRun.pullRequest = pullRequest;
            this.changed(run);
            await this.options.store.save(run);
          },
          started: (processGroup) => {
            (stepRun as StoredStepRun).processGroup = processGroup;
            this.options.store.save(run).catch(() => undefined);
          },
        }).catch((error): StepOutcome => ({ status: 'failed', error: `The step could not run: ${errorMessage(error)}` }));
        await this.logs.end(run.id, step.id, attempt);
        if (outcome.status === 'rateLimited' || carried) {
          const settled = await this.settleRateLimit(run, stepRun, outcome, carried);
          if (!settled) return; // waits for the usage limit to reset
          outcome = settled;
        }

        if (outcome.status === 'waiting') {
          // An agent paused at a budget cap: its stop, the message, what it printed and spent.
          if (outcome.budgetStop) {
            const { status: _waiting, ...paused } = outcome;
            Object.assign(stepRun, paused);
            delete (stepRun as StoredStepRun).processGroup;
            clearLiveness(stepRun); // it no longer runs: the card says why it waits
          }
          stepRun.status = 'waiting';
          run.status = 'waiting';
          this.changed(run);
          await this.options.store.save(run);
          this.announce({ type: 'step-waiting', run, step: stepRun });
          return;
        }
        delete (stepRun as StoredStepRun).processGroup;
        clearLiveness(stepRun);
        if (outcome.status === 'cancelled' || signal.aborted) {
          const reason = outcome.status === 'cancelled' && outcome.error ? { error: outcome.error } : {};
          Object.assign(stepRun, { status: this.stopping ? 'failed' : 'cancelled', finishedAt: this.now() }, this.stopping ? { error: 'interrupted' } : reason);
          return this.stopped(run);
        }
        delete (stepRun as StoredStepRun).processGroup;
        Object.assign(stepRun, outcome, { finishedAt: this.now() });
        if (outcome.status === 'failed') await this.recordCause(run, stepRun, attempt);
        this.changed(run);
        await this.options.store.save(run);
        this.announceStep({ type: 'step-finished', run, step: stepRun });
        if (outcome.status === 'succeeded') break;
        if (tried + 1 < attempts) this.logs.note(run.id, `Attempt ${attempt} failed; trying again (${tried + 2} of ${attempts})`, step.id, attempt);
      }
      if ((stepRun.status as StepRun['status']) === 'failed' && !step.continueOnError) {
        return this.finish(run, 'failed', `Step \`${step.id}\` failed: ${stepRun.error ?? 'unknown error'}`);
      }
    }
    return this.finish(run, 'succeeded');
  }

  /** A failed attempt's cause (core/failure-cause.ts): the first error-looking line of its log's last 10,000, read back. */
  private async recordCause(run: Run, stepRun: StepRun, attempt: number): Promise<void> {
    const lines = await this.logs.read(run.id, stepRun.id, attempt, { limit: 10_000 }).catch(() => []);
    const cause = findFailureCause(lines, stepRun.error);
    if (cause) stepRun.cause = cause;
  }

  /** What the run that last worked on a follow-up's branch did with agents (follow-up-session.ts), read whole. */
  private async earlierAgentWork(run: Run): Promise<EarlierAgentWork | undefined> {
    for (const id of earlierRunsOnBranch(this.allRuns(), run)) {
      const earlier = await this.getRun(id).catch(() => undefined);
      const work = earlier && agentWorkOf(earlier);
      if (work) return work;
    }
    return undefined;
  }

  // ─── The model's usage limit (rate-limit-waits.ts) ───

  /**
   * An attempt that ended on the model's usage limit waits (the run `waiting`, no slot held) until
   * its resumeAt; past 24 hours of waits it fails in words. Resolves undefined when the step waits,
   * else the outcome to go on with (the usage before the wait added to a continued attempt's).
   */
  private async settleRateLimit(run: Run, stepRun: StepRun, outcome: StepOutcome, carried: StepUsage | undefined): Promise<StepOutcome | undefined> {
    const usage = addUsage(carried, 'usage' in outcome ? outcome.usage : undefined);
    const withUsage = usage ? { usage } : {};
    if (outcome.status !== 'rateLimited') return outcome.status === 'succeeded' || outcome.status === 'failed' ? { ...outcome, ...withUsage } : outcome;
    const decision = decideRateLimitWait(rateLimitHistory(stepRun), outcome, this.now());
    if (!decision.wait) return { status: 'failed', ...(outcome.output ? { output: outcome.output } : {}), ...withUsage, error: decision.error };
    delete (stepRun as StoredStepRun).processGroup;
    markRateLimitWait(stepRun, decision, usage);
    run.status = 'waiting';
    this.logs.note(run.id, `${outcome.message}: the step waits until ${clockWords(decision.resumeAt)}, then goes on in the agent's session (not a failed attempt)`, stepRun.id, stepRun.attempt);
    this.changed(run);
    await this.options.store.save(run);
    this.armRateLimit(run, stepRun);
    this.announce({ type: 'step-liveness', run, step: stepRun });
    return undefined;
  }

  private armRateLimit(run: Run, stepRun: StepRun): void {
    this.rateLimitTimers.arm(run.id, stepRun.resumeAt ?? this.now(), () => {
      this.resumeRateLimited(run, stepRun).catch((error) => console.error(`Resuming run ${run.id} after the usage limit failed: ${errorMessage(error)}`));
    });
  }

  /** The wait is over (its time came, or a person said go on now): the run is queued to continue the attempt. */
  private async resumeRateLimited(run: Run, stepRun: StepRun): Promise<void> {
    if (this.stopping || this.runs.get(run.id) !== run || !isRateLimitWait(stepRun)) return;
    this.rateLimitTimers.disarm(run.id);
    releaseRateLimitWait(stepRun);
    await this.goOn(run);
  }

  /** approveStep on a step waiting out the usage limit: true goes on now; false fails the step in words. */
  private async decideRateLimitWait(run: Run, stepRun: StepRun, step: AgentStep, approved: boolean, comment: string): Promise<void> {
    if (approved) return this.resumeRateLimited(run, stepRun);
    this.rateLimitTimers.disarm(run.id);
    clearLiveness(stepRun);
    const error = `Stopped waiting for the model's usage limit to reset${comment ? `: ${comment}` : ''}`;
    Object.assign(stepRun, { status: 'failed', finishedAt: this.now(), error });
    if (!step.continueOnError) return this.finish(run, 'failed', `Step \`${step.id}\` failed: ${error}`);
    await this.goOn(run);
  }

  /** A run whose execution was aborted: cancelled by the user, or interrupted by a stop. */
  private stopped(run: Run): Promise<void> {
    return this.stopping ? this.finish(run, 'failed', 'interrupted') : this.finish(run, 'cancelled');
  }

  private async finish(run: Run, status: 'succeeded' | 'failed' | 'cancelled' | 'rejected', error?: string): Promise<void> {
    await this.collectWork(run);
    const now = this.now();
    for (const step of run.steps) if (step.status === 'pending' || step.status === 'running' || step.status === 'waiting') step.status = 'skipped';
    for (const step of run.steps) clearLiveness(step);
    this.rateLimitTimers.disarm(run.id);
    run.status = status;
    run.finishedAt = now;
    if (error) run.error = error;
    else delete run.error;
    this.changed(run);
    await this.options.store.save(run);
    this.resuming.delete(run.id);
    this.announce({ type: 'finished', run });
    if (this.runs.get(run.id) === run) this.runs.set(run.id, slimRun(run));
  }

  // ─── Runners (engine/runner.ts) ───

  /** The ExecutionRunner of the run's runner; undefined when that runner was deleted (never another in its place). */
  private executionFor(run: Run): ExecutionRunner | undefined {
    const runner = allRunners(this.options.config.current.runners).find((candidate) => candidate.id === (run.runnerId ?? 'local'));
    return runner && executionRunner(runner, this.sshSetup);
  }

  /**
   * A run that worked on another machine brings its work home before it ends: its branch fetched
   * into the project repository, the remote worktree removed. The run then names the branch (as a
   * retired worktree does) and the kept-work rules apply to it. A failure is said in the run's log;
   * the remote worktree then stays.
   */
  private async collectWork(run: Run): Promise<void> {
    const execution = run.workspace ? this.executionFor(run) : undefined;
    const project = this.options.config.current.projects.find((candidate) => candidate.id === run.projectId);
    if (!execution?.remote || !project) return;
    try {
      const branch = await execution.collect({ project, runId: run.id, ...(run.issue?.title ? { title: run.issue.title } : {}), env: this.gitEnvironment(), log: (line) => this.logs.note(run.id, line) });
      delete run.workspace;
      if (branch) run.branch = branch;
    } catch (error) {
      this.logs.note(run.id, `The work could not be brought home from ${execution.runner.name}; the remote worktree stays: ${errorMessage(error)}`);
    }
  }

  /** Stops what runs on ssh hosts for runs no longer live (Factory was killed): a restart leaves no remote process without its run. */
  private stopRemoteLeftovers(): void {
    const live = [...this.runs.values()].filter((run) => !isFinished(run.status)).map((run) => run.id);
    for (const runner of this.options.config.current.runners) {
      executionRunner(runner, this.sshSetup).stopLeftovers?.(live).then(
        (stopped) => { if (stopped.length > 0) console.log(`Stopped ${stopped.length} process${stopped.length === 1 ? '' : 'es'} on ${runner.host} left by runs that no longer run: ${stopped.join(', ')}`); },
        (error) => console.warn(`Could not look for leftover processes on ${runner.name}: ${errorMessage(error)}`),
      );
    }
  }

  // ─── Helpers ───

  /** Tells the lifecycle subscribers; one that throws is reported and does not stop the others. */
  private announce(event: RunLifecycleEvent): void {
    tellEach(this.lifecycleListeners, event);
  }

  /** Tells the step subscribers, the same way. */
  private announceStep(event: RunStepEvent): void {
    tellEach(this.stepListeners, event);
  }

  private changed(run: Run): void {
    const usage = totalUsage(run.steps);
    if (usage) run.usage = usage;
    else delete run.usage;
    this.options.pacer.runChanged(run.id, () => slimRun(run));
  }

  private log(runId: string, stepId: string, attempt: number, line: string, stream: NonNullable<LogLine['stream']>): void {
    this.logs.line(runId, stepId, attempt, line, stream);
  }

  private templateContext(run: Run, project: Project, workspace: string): TemplateContext {
    const steps: TemplateContext['steps'] = {};
    const pipeline = run.pipeline as Pipeline;
    run.steps.forEach((stepRun, index) => {
      if (stepRun.status === 'pending' || stepRun.status === 'skipped') return;
      const step = pipeline.steps[index]!;
      steps[stepRun.id] = {
        ...(stepRun.output !== undefined ? { output: stepRun.output } : {}),
        ...(step.kind === 'approval' && stepRun.approval ? { selected: selectedLabels(step, stepRun.approval.selected), comment: stepRun.approval.comment ?? '' } : {}),
        ...(stepRun.pullRequest ? { url: stepRun.pullRequest.url, number: stepRun.pullRequest.number } : {}),
      };
    });
    const url = this.options.runUrl?.(run.id);
    return {
      ...(run.issue ? { issue: run.issue as Issue } : {}),
      vars: run.variables,
      steps,
      run: { id: run.id, ...(url ? { url } : {}) },
      project: { name: project.name, path: project.path },
      workspace,
    };
  }

  private baseEnvironment(): NodeJS.ProcessEnv {
    return this.options.environment ?? process.env;
  }

  private secrets(): string[] {
    return this.options.secrets?.() ?? [];
  }

  /**
   * The frozen copy of a pipeline that its runs keep. Configuration objects are replaced, never
   * changed, on every edit, so one copy serves every run started from the same version.
   */
  private snapshotOf(pipeline: Pipeline): Pipeline {
    let snapshot = this.snapshots.get(pipeline);
    if (!snapshot) {
      snapshot = deepFreeze(JSON.parse(JSON.stringify(pipeline)) as Pipeline);
      this.snapshots.set(pipeline, snapshot);
    }
    return snapshot;
  }

  private currentPipeline(run: Run): Pipeline | undefined {
    return this.options.config.current.pipelines.find((pipeline) => pipeline.id === run.pipelineId);
  }

  private requireRun(id: unknown): Run {
    if (typeof id !== 'string') throw new ValidationError(`A run id is text such as run_…, not ${quote(id)}`);
    const run = this.runs.get(id);
    if (!run) throw new NotFoundError(`No run with id ${quote(id)}`);
    return run;
  }

  private requireStep(run: Run, stepId: unknown): StepRun {
    const step = typeof stepId === 'string' ? run.steps.find((candidate) => candidate.id === stepId) : undefined;
    if (!step) throw new NotFoundError(`Run \`${run.id}\` has no step ${quote(stepId)} (its steps: ${run.steps.map((candidate) => candidate.id).join(', ')})`);
    return step;
  }
}
