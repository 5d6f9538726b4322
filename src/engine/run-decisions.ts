// Decisions on a waiting step: an approval answered (approved, with its choices, or rejected), an
// agent paused at a budget cap let go on or failed, a wait for the model's usage limit ended early
// or given up; and the daily spend limit releasing its pauses. A run let go on is queued again.

import type { AgentStep, ApprovalDecider, Run, StepRun, StepUsage } from '../core/api';
import { ConflictError, ValidationError, errorMessage, quote } from '../core/errors';
import { resolveSelection, type StoredStepRun } from '../core/runs';
import {
  addUsage, clearLiveness, clockWords, decideRateLimitWait, isRateLimitWait, markRateLimitWait, rateLimitHistory, releaseRateLimitWait,
} from './rate-limit-waits';
import { finishRun } from './run-lifecycle';
import type { RunQueue } from './run-queue';
import type { RunState } from './run-state';
import type { StepOutcome } from './steps';

export class RunDecisions {
  constructor(private readonly state: RunState, private readonly queue: RunQueue) {}

  /** `by` is internal (the doors and trigger surfaces name who decided); it is recorded on the approval. */
  async approveStep(runId: unknown, stepId: unknown, approved: unknown, comment?: unknown, selected?: unknown, by?: ApprovalDecider): Promise<void> {
    const run = this.state.requireRun(runId);
    const stepRun = this.state.requireStep(run, stepId);
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
    const at = this.state.now();
    const text = typeof comment === 'string' && comment.trim() ? comment : undefined;
    if (approved) {
      const chosen = resolveSelection(step, selected);
      stepRun.approval = { approved: true, ...(text ? { comment: text } : {}), ...(chosen ? { selected: chosen } : {}), at, ...(by ? { by } : {}) };
      Object.assign(stepRun, { status: 'succeeded', finishedAt: at });
      this.state.announceStep({ type: 'step-finished', run, step: stepRun });
      await this.goOn(run);
    } else {
      stepRun.approval = { approved: false, ...(text ? { comment: text } : {}), at, ...(by ? { by } : {}) };
      Object.assign(stepRun, { status: 'rejected', finishedAt: at });
      this.state.announceStep({ type: 'step-finished', run, step: stepRun });
      await finishRun(this.state, run, 'rejected', `Rejected at step \`${stepRun.id}\`${text ? `: ${text}` : ''}`);
    }
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
      this.state.budget.approve(stepRun, raise);
      stepRun.status = 'pending';
    } else {
      Object.assign(stepRun, { status: 'failed', error: this.state.budget.rejection(run, stepRun), finishedAt: this.state.now() });
      delete stepRun.budgetStop;
    }
    if (!goesOn) return finishRun(this.state, run, 'failed', `Step \`${stepRun.id}\` failed: ${stepRun.error}`);
    await this.goOn(run);
  }

  /** A waiting run that was let go on: queued again (ahead of newer runs), written, started when a slot is free. */
  private async goOn(run: Run): Promise<void> {
    run.status = 'queued';
    this.state.resuming.add(run.id);
    this.queue.enqueue(run.id);
    this.state.changed(run);
    await this.state.options.store.save(run);
    this.queue.pump();
  }

  /** Agent steps paused at the daily spend limit go on once it lets them (raised or removed in Settings). */
  releaseDailyPauses(): void {
    for (const run of this.state.runs.values()) {
      if (run.status !== 'waiting') continue;
      const paused = (run.steps as StoredStepRun[]).find((step) => step.status === 'waiting' && this.state.budget.dailyReleased(step));
      if (paused) void this.decideBudget(run, paused, true, false).catch((error) => console.error(`Run ${run.id} could not go on: ${errorMessage(error)}`));
    }
  }

  /**
   * An attempt that ended on the model's usage limit waits (the run `waiting`, no slot held) until
   * its resumeAt; past 24 hours of waits it fails in words. Resolves undefined when the step waits,
   * else the outcome to go on with (the usage before the wait added to a continued attempt's).
   */
  async settleRateLimit(run: Run, stepRun: StepRun, outcome: StepOutcome, carried: StepUsage | undefined): Promise<StepOutcome | undefined> {
    const usage = addUsage(carried, 'usage' in outcome ? outcome.usage : undefined);
    const withUsage = usage ? { usage } : {};
    if (outcome.status !== 'rateLimited') return outcome.status === 'succeeded' || outcome.status === 'failed' ? { ...outcome, ...withUsage } : outcome;
    const decision = decideRateLimitWait(rateLimitHistory(stepRun), outcome, this.state.now());
    if (!decision.wait) return { status: 'failed', ...(outcome.output ? { output: outcome.output } : {}), ...withUsage, error: decision.error };
    delete (stepRun as StoredStepRun).processGroup;
    markRateLimitWait(stepRun, decision, usage);
    run.status = 'waiting';
    this.state.logs.note(run.id, `${outcome.message}: the step waits until ${clockWords(decision.resumeAt)}, then goes on in the agent's session (not a failed attempt)`, stepRun.id, stepRun.attempt);
    this.state.changed(run);
    await this.state.options.store.save(run);
    this.armRateLimit(run, stepRun);
    this.state.announce({ type: 'step-liveness', run, step: stepRun });
    return undefined;
  }

  armRateLimit(run: Run, stepRun: StepRun): void {
    this.state.rateLimitTimers.arm(run.id, stepRun.resumeAt ?? this.state.now(), () => {
      this.resumeRateLimited(run, stepRun).catch((error) => console.error(`Resuming run ${run.id} after the usage limit failed: ${errorMessage(error)}`));
    });
  }

  /** The wait is over (its time came, or a person said go on now): the run is queued to continue the attempt. */
  private async resumeRateLimited(run: Run, stepRun: StepRun): Promise<void> {
    if (this.state.stopping || this.state.runs.get(run.id) !== run || !isRateLimitWait(stepRun)) return;
    this.state.rateLimitTimers.disarm(run.id);
    releaseRateLimitWait(stepRun);
    await this.goOn(run);
  }

  /** approveStep on a step waiting out the usage limit: true goes on now; false fails the step in words. */
  private async decideRateLimitWait(run: Run, stepRun: StepRun, step: AgentStep, approved: boolean, comment: string): Promise<void> {
    if (approved) return this.resumeRateLimited(run, stepRun);
    this.state.rateLimitTimers.disarm(run.id);
    clearLiveness(stepRun);
    const error = `Stopped waiting for the model's usage limit to reset${comment ? `: ${comment}` : ''}`;
    Object.assign(stepRun, { status: 'failed', finishedAt: this.state.now(), error });
    if (!step.continueOnError) return finishRun(this.state, run, 'failed', `Step \`${step.id}\` failed: ${error}`);
    await this.goOn(run);
  }
}
