// The step driver: one run's workspace (made once), then its pending steps in order, each step's
// attempts and retries, and what each attempt's outcome does to the run (go on, wait, fail with its
// cause, stop). Where a step executes is the run's runner (runner.ts), reached only through it.

import type { Issue, Pipeline, Project, Run, StepRun } from '../core/api';
import { errorMessage, quote } from '../core/errors';
import { findFailureCause } from '../core/failure-cause';
import { selectedLabels, type StoredStepRun } from '../core/runs';
import { stepEnvironment, type TemplateContext } from '../core/template';
import { buildStepEnvironment } from './environment';
import { agentWorkOf, earlierRunsOnBranch } from './follow-up-session';
import { clearLiveness, takeContinuation } from './rate-limit-waits';
import type { RunDecisions } from './run-decisions';
import { finishRun, stoppedRun } from './run-lifecycle';
import { allRuns, getRun } from './run-queries';
import type { RunState } from './run-state';
import type { EarlierAgentWork, StepOutcome } from './steps';

export const defaultStepTimeoutSec = 3600;

export class StepDriver {
  constructor(private readonly state: RunState, private readonly decisions: RunDecisions) {}

  /** Runs the workspace setup (first time only) and the pending steps, in order. */
  async drive(run: Run, signal: AbortSignal): Promise<void> {
    const pipeline = run.pipeline!;
    const project = this.state.options.config.current.projects.find((candidate) => candidate.id === run.projectId);
    if (!project) return finishRun(this.state, run, 'failed', `The project of pipeline ${quote(run.pipelineName)} no longer exists`);
    // The run is written as running before anything it does outside Factory (a worktree, a setup
    // command, a step's process), so a crash meanwhile ends it as interrupted; an approval step
    // does nothing outside, and is written once it waits.
    if (!run.workspace && (project.worktrees || project.setupCommand?.trim())) await this.state.options.store.save(run);

    const execution = this.state.executionFor(run);
    if (!execution) return finishRun(this.state, run, 'failed', `The runner ${quote(run.runnerId)} no longer exists: choose another in the project, pipeline or trigger and retry`);

    if (!run.workspace) {
      try {
        run.workspace = await execution.prepare({
          project, runId: run.id, worktreesDir: this.state.options.worktreesDir, signal, run: this.state.runCommand,
          ...(run.followUp ? { followUp: { remote: run.followUp.remote ?? 'origin', branch: run.followUp.branch } } : {}),
          env: buildStepEnvironment(this.state.baseEnvironment(), this.state.secrets(), stepEnvironment(this.templateContext(run, project, project.path))),
          log: (line, stream) => this.state.log(run.id, '', 0, line, stream),
        });
      } catch (error) {
        await this.state.logs.end(run.id, '', 0);
        if (signal.aborted) return stoppedRun(this.state, run);
        return finishRun(this.state, run, 'failed', `Setup failed: ${errorMessage(error)}`);
      }
      await this.state.logs.end(run.id, '', 0);
      delete run.branch; // the worktree is back (made again from the kept branch)
      this.state.changed(run);
    }

    let earlier: Promise<EarlierAgentWork | undefined> | undefined;
    for (let index = 0; index < run.steps.length; index++) {
      const stepRun = run.steps[index]!;
      if (stepRun.status !== 'pending') continue;
      if (signal.aborted) return stoppedRun(this.state, run);
      const step = pipeline.steps[index]!;
      // onStall 'retry' with no retries set still tries once more.
      const attempts = step.kind === 'approval' ? 1 : (step.retries ?? (step.kind === 'agent' && step.onStall === 'retry' ? 1 : 0)) + 1;
      for (let tried = 0; tried < attempts; tried++) {
        // After the model's usage limit the attempt goes on: same number, same log, its session and usage kept.
        const continuing = takeContinuation(stepRun);
        const carried = continuing ? stepRun.usage : undefined;
        const attempt = continuing ? stepRun.attempt : stepRun.attempt + 1;
        if (!continuing) for (const key of ['finishedAt', 'exitCode', 'error', 'output', 'usage', 'approval', 'prompt', 'systemPrompt', 'message', 'sessionId', 'cause'] as const) delete stepRun[key];
        Object.assign(stepRun, { attempt, status: 'running' }, continuing ? {} : { startedAt: this.state.now() });
        if (!continuing) this.state.logs.begin(run.id, step.id, attempt);
        this.state.changed(run);
        this.state.announceStep({ type: 'step-started', run, step: stepRun });
        if (step.kind !== 'approval') await this.state.options.store.save(run); // after a crash, the step that was running is known
        const timeoutMs = (step.timeoutSec ?? defaultStepTimeoutSec) * 1000;
        const template = this.templateContext(run, project, run.workspace);
        if (step.kind === 'agent' && run.followUp) earlier ??= this.earlierAgentWork(run);
        const earlierWork = step.kind === 'agent' ? await earlier : undefined;
        const guidance = step.kind === 'agent' ? this.state.guidanceSource?.(run, step.id) : undefined;
        let outcome: StepOutcome = await this.state.options.runners[step.kind]({
          runId: run.id, run, step, attempt, workspace: run.workspace, template, timeoutMs, signal,
          defaults: { ...(pipeline.harnessId ? { harnessId: pipeline.harnessId } : {}), ...(pipeline.model ? { model: pipeline.model } : {}) },
          ...(earlierWork ? { earlier: earlierWork } : {}),
          ...(step.kind === 'agent' ? { budget: this.state.budget.watch(run, stepRun, (line) => this.state.log(run.id, step.id, attempt, line, 'info')) } : {}),
          ...(continuing ? { continueSession: stepRun.sessionId ? { sessionId: stepRun.sessionId } : {} } : {}),
          ...(guidance ? { guidance } : {}),
          environment: buildStepEnvironment(this.state.baseEnvironment(), this.state.secrets()),
          secrets: this.state.secrets(),
          log: (line, stream) => this.state.log(run.id, step.id, attempt, line, stream),
          output: (chunk, stream) => this.state.logs.output(run.id, step.id, attempt, chunk, stream),
          exec: (processOptions, needs) => execution.exec(processOptions, { key: `${run.id}.${step.id}`, ...needs }),
          remote: execution.remote,
          record: (details) => {
            const wasStalled = stepRun.liveness === 'stalled';
            Object.assign(stepRun, details);
            this.state.changed(run);
            if (details.liveness && (details.liveness === 'stalled') !== wasStalled) this.state.announce({ type: 'step-liveness', run, step: stepRun });
            // The session is what a follow-up resumes: written at once, so it outlives a crash.
            if (details.sessionId) this.state.options.store.save(run).catch(() => undefined);
          },
          recordPullRequest: async (pullRequest) => {
            stepRun.pullRequest = pullRequest;
            this.state.changed(run);
            await this.state.options.store.save(run);
          },
          started: (processGroup) => {
            (stepRun as StoredStepRun).processGroup = processGroup;
            this.state.options.store.save(run).catch(() => undefined);
          },
        }).catch((error): StepOutcome => ({ status: 'failed', error: `The step could not run: ${errorMessage(error)}` }));
        await this.state.logs.end(run.id, step.id, attempt);
        if (outcome.status === 'rateLimited' || carried) {
          const settled = await this.decisions.settleRateLimit(run, stepRun, outcome, carried);
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
          this.state.changed(run);
          await this.state.options.store.save(run);
          this.state.announce({ type: 'step-waiting', run, step: stepRun });
          return;
        }
        delete (stepRun as StoredStepRun).processGroup;
        clearLiveness(stepRun);
        if (outcome.status === 'cancelled' || signal.aborted) {
          const reason = outcome.status === 'cancelled' && outcome.error ? { error: outcome.error } : {};
          Object.assign(stepRun, { status: this.state.stopping ? 'failed' : 'cancelled', finishedAt: this.state.now() }, this.state.stopping ? { error: 'interrupted' } : reason);
          return stoppedRun(this.state, run);
        }
        delete (stepRun as StoredStepRun).processGroup;
        Object.assign(stepRun, outcome, { finishedAt: this.state.now() });
        if (outcome.status === 'failed') await this.recordCause(run, stepRun, attempt);
        this.state.changed(run);
        await this.state.options.store.save(run);
        this.state.announceStep({ type: 'step-finished', run, step: stepRun });
        if (outcome.status === 'succeeded') break;
        if (tried + 1 < attempts) this.state.logs.note(run.id, `Attempt ${attempt} failed; trying again (${tried + 2} of ${attempts})`, step.id, attempt);
      }
      if ((stepRun.status as StepRun['status']) === 'failed' && !step.continueOnError) {
        return finishRun(this.state, run, 'failed', `Step \`${step.id}\` failed: ${stepRun.error ?? 'unknown error'}`);
      }
    }
    return finishRun(this.state, run, 'succeeded');
  }

  /** A failed attempt's cause (core/failure-cause.ts): the first error-looking line of its log's last 10,000, read back. */
  private async recordCause(run: Run, stepRun: StepRun, attempt: number): Promise<void> {
    const lines = await this.state.logs.read(run.id, stepRun.id, attempt, { limit: 10_000 }).catch(() => []);
    const cause = findFailureCause(lines, stepRun.error);
    if (cause) stepRun.cause = cause;
  }

  /** What the run that last worked on a follow-up's branch did with agents (follow-up-session.ts), read whole. */
  private async earlierAgentWork(run: Run): Promise<EarlierAgentWork | undefined> {
    for (const id of earlierRunsOnBranch(allRuns(this.state), run)) {
      const earlier = await getRun(this.state, id).catch(() => undefined);
      const work = earlier && agentWorkOf(earlier);
      if (work) return work;
    }
    return undefined;
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
    const url = this.state.options.runUrl?.(run.id);
    return {
      ...(run.issue ? { issue: run.issue as Issue } : {}),
      vars: run.variables,
      steps,
      run: { id: run.id, ...(url ? { url } : {}) },
      project: { name: project.name, path: project.path },
      workspace,
    };
  }
}
