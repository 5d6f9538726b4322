// What the parts of the run service share (runs.ts is the façade that owns one): the runs in
// memory, their logs, the subscribers to run and step events, the clock, and the small helpers
// every part uses (announce, changed, requireRun, the environment for git and steps).

import type { LogLine, Pipeline, Run, RunFollowUp, StepRun } from '../core/api';
import { NotFoundError, ValidationError, quote } from '../core/errors';
import { slimRun } from '../core/runs';
import { allRunners } from '../core/runners';
import type { RunStore } from '../store/run-store';
import { SpendFile } from '../store/spend-file';
import { BudgetKeeper } from './budget';
import type { ConfigService } from './config';
import { buildStepEnvironment } from './environment';
import type { EventHub } from './events';
import type { EventPacer } from './pacer';
import { runProcess } from './process';
import { RateLimitTimers, totalUsage } from './rate-limit-waits';
import { RunLogs } from './run-logs';
import { defaultSshSetup, executionRunner, type ExecutionRunner } from './runner';
import type { SshSetup } from './ssh';
import type { StepRunners } from './steps';
import type { CommandRunner } from './workspace';

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

/**
 * What the parts of the run service share: the runs in memory, their logs, the clock, the
 * subscribers, and the small helpers each part uses. One per RunService, made by it; the parts
 * (run-queue, step-driver, run-decisions, run-lifecycle, run-queries, run-housekeeping) read and change it.
 */
export class RunState {
  readonly runs = new Map<string, Run>();
  /** Run ids, oldest first (ids sort by creation). */
  order: string[] = [];
  readonly logs: RunLogs;
  /** Worktrees being removed by retention, by run id: a retry or a delete waits for them. */
  readonly retiring = new Map<string, Promise<void>>();
  /** Set by stop: no new run starts, and a step stopped meanwhile ends its run as interrupted. */
  stopping = false;
  readonly lifecycleListeners = new Set<(event: RunLifecycleEvent) => void>();
  readonly stepListeners = new Set<(event: RunStepEvent) => void>();
  /** Guidance for an agent step about to start (text a person sent while the run worked), by run and step. */
  guidanceSource: ((run: Readonly<Run>, stepId: string) => string | undefined) | undefined;
  /** Runs whose approval let them go on: their next start is a resumption. */
  readonly resuming = new Set<string>();
  /** Called with a run before it is deleted (the trigger service keeps its dedup key). */
  beforeDelete: ((run: Run) => Promise<void>) | undefined;
  /** Frozen pipeline snapshots for new runs, by the configuration's pipeline object. */
  readonly snapshots = new WeakMap<Pipeline, Pipeline>();
  readonly now: () => number;
  readonly runCommand: CommandRunner = (options) => runProcess(options);
  readonly budget: BudgetKeeper;
  /** Steps waiting out the model's usage limit go on at their resumeAt (rate-limit-waits.ts). */
  readonly rateLimitTimers: RateLimitTimers;
  readonly sshSetup: () => Promise<SshSetup>;

  constructor(readonly options: RunServiceOptions) {
    this.now = options.now ?? Date.now;
    this.budget = options.budget ?? new BudgetKeeper({ spend: SpendFile.inMemory(), dailyLimit: () => options.config.settings.spendLimitUsdPerDay, now: this.now });
    this.rateLimitTimers = new RateLimitTimers(this.now);
    this.sshSetup = options.ssh ?? defaultSshSetup();
    this.logs = new RunLogs(options.store.logs, () => options.pacer.logsReady(() => this.logs.take()));
  }

  /** Tells the lifecycle subscribers; one that throws is reported and does not stop the others. */
  announce(event: RunLifecycleEvent): void {
    tellEach(this.lifecycleListeners, event);
  }

  /** Tells the step subscribers, the same way. */
  announceStep(event: RunStepEvent): void {
    tellEach(this.stepListeners, event);
  }

  /** The run changed: its total usage recomputed, its slim copy sent out (paced). */
  changed(run: Run): void {
    const usage = totalUsage(run.steps);
    if (usage) run.usage = usage;
    else delete run.usage;
    this.options.pacer.runChanged(run.id, () => slimRun(run));
  }

  /** A line of a step attempt's log (`''` and 0: the run's setup log). */
  log(runId: string, stepId: string, attempt: number, line: string, stream: NonNullable<LogLine['stream']>): void {
    this.logs.line(runId, stepId, attempt, line, stream);
  }

  baseEnvironment(): NodeJS.ProcessEnv {
    return this.options.environment ?? process.env;
  }

  secrets(): string[] {
    return this.options.secrets?.() ?? [];
  }

  gitEnvironment(): Record<string, string> {
    return buildStepEnvironment(this.baseEnvironment(), this.secrets());
  }

  currentPipeline(run: Run): Pipeline | undefined {
    return this.options.config.current.pipelines.find((pipeline) => pipeline.id === run.pipelineId);
  }

  requireRun(id: unknown): Run {
    if (typeof id !== 'string') throw new ValidationError(`A run id is text such as run_…, not ${quote(id)}`);
    const run = this.runs.get(id);
    if (!run) throw new NotFoundError(`No run with id ${quote(id)}`);
    return run;
  }

  requireStep(run: Run, stepId: unknown): StepRun {
    const step = typeof stepId === 'string' ? run.steps.find((candidate) => candidate.id === stepId) : undefined;
    if (!step) throw new NotFoundError(`Run \`${run.id}\` has no step ${quote(stepId)} (its steps: ${run.steps.map((candidate) => candidate.id).join(', ')})`);
    return step;
  }

  /** The ExecutionRunner of the run's runner; undefined when that runner was deleted (never another in its place). */
  executionFor(run: Run): ExecutionRunner | undefined {
    const runner = allRunners(this.options.config.current.runners).find((candidate) => candidate.id === (run.runnerId ?? 'local'));
    return runner && executionRunner(runner, this.sshSetup);
  }
}
