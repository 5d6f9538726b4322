// Step runners: one per step kind. The run service drives the order, retries and state; a runner
// only executes one attempt of one step. A new kind plugs in by adding a runner to the table.

import type { BudgetStop, PullRequestRef, Run, Step, StepKind, StepLiveness, StepUsage } from '../core/api';
import { renderTemplate, type TemplateContext } from '../core/template';
import type { BudgetWatch } from './budget';
import type { ProcessResult, RunProcessOptions } from './process';

export interface StepAttempt {
  runId: string;
  /** The run as it is now (its issue, its follow-up, how its earlier steps went; the run service always gives it): read it, never change it. */
  run?: Readonly<Run>;
  step: Step;
  attempt: number;
  workspace: string;
  /** The pipeline's defaults for agent steps. */
  defaults?: { harnessId?: string; model?: string };
  /** Values for `{{ }}` placeholders: issue, vars, earlier steps, run, project, workspace. */
  template: TemplateContext;
  /** The environment before the step's own values (already free of Factory's secrets). */
  environment: Record<string, string>;
  /** Secrets that must never reach the process, even through the step's own env. */
  secrets: readonly string[];
  timeoutMs: number;
  /** Aborted when the run is cancelled. */
  signal: AbortSignal;
  log(line: string, stream: 'out' | 'err' | 'info'): void;
  /** A process's output bytes as they come (split into lines only when read); a promise asks the producer to wait. */
  output(chunk: Buffer, stream: 'out' | 'err'): Promise<void> | undefined;
  /** Stores what the step was given (a rendered prompt or approval message) or the agent session, as soon as it is known. */
  record(details: { prompt?: string; systemPrompt?: string; message?: string; sessionId?: string; liveness?: StepLiveness; livenessSince?: number }): void;
  /** The attempt goes on after the model's usage limit (rate-limit-waits.ts): resume this agent session where the harness can. */
  continueSession?: { sessionId?: string };
  /** Agent steps of a follow-up run: what the run that last worked on its branch did (resume.ts). */
  earlier?: EarlierAgentWork;
  /** Agent steps: what people said while the run worked (a Linear agent session), appended to the rendered prompt as it is. */
  guidance?: string;
  /** Stores the pull request a pullRequest step opened or found, and writes the run down before it resolves. */
  recordPullRequest?(pullRequest: PullRequestRef): Promise<void>;
  /** Records the process group of the attempt's process (written down, for crash recovery). */
  started(processGroup: number): void;
  /** Agent steps: the caps this attempt is held to, and how to meter it (engine/budget.ts). */
  budget?: BudgetWatch;
  /**
   * Runs a process of this attempt where the run's runner runs steps (engine/runner.ts: here, in a
   * sandbox, or on another machine); the run service always gives it, and without it the step runner
   * runs the process here. `harnessPaths`: the agent CLI's declared folders, which a sandbox mounts.
   */
  exec?: (options: RunProcessOptions, needs?: { harnessPaths?: readonly string[] }) => Promise<ProcessResult>;
  /** True when `exec` runs on another machine: an agent CLI is looked for there by its name, not resolved here. */
  remote?: boolean;
}

/** The agent steps of the run that last worked on a follow-up's branch, for an agent step to resume. */
export interface EarlierAgentWork {
  runId: string;
  /** That run's working folder, where it had one (Claude Code keeps sessions by folder). */
  workspace?: string;
  /** Its agent steps that ran, in pipeline order; harnessId is the step's or its pipeline's (from the run's snapshot), absent for the default harness. */
  steps: { stepId: string; harnessId?: string; sessionId?: string; output?: string }[];
}

export type StepOutcome =
  | { status: 'succeeded' | 'failed'; exitCode?: number; output?: string; error?: string; usage?: StepUsage }
  | { status: 'cancelled'; error?: string }
  /** The model provider's usage limit ended the attempt (agent steps): not a failure; the step waits (rate-limit-waits.ts). */
  | { status: 'rateLimited'; harness: string; message: string; resetsAt?: number; output?: string; usage?: StepUsage }
  /** The step waits for a person (approval steps, an agent paused at a budget cap): the run releases its slot. */
  | { status: 'waiting'; budgetStop?: BudgetStop; message?: string; output?: string; usage?: StepUsage };

export type StepRunner = (attempt: StepAttempt) => Promise<StepOutcome>;

export type StepRunners = Record<StepKind, StepRunner>;

/** Approval steps render their message; then the run waits until `approveStep` decides. */
export const runApprovalStep: StepRunner = async (attempt) => {
  if (attempt.step.kind === 'approval') attempt.record({ message: renderTemplate(attempt.step.message, attempt.template) });
  return { status: 'waiting' };
};
