// What Factory watches while an agent CLI runs, beside its answer (issue 24.3, 24.4): how lively it
// is (engine/liveness.ts, recorded on the step when the word changes), what a stall does (`onStall`:
// a notice, cancelling the step, or stopping it to try again as another attempt), and whether the
// model provider's usage limit ended it (usage-limits.ts). agent-step.ts feeds it every line and
// asks it, once the process ended, what the attempt's outcome is.

import type { AgentStep, StepLiveness } from '../core/api';
import { formatDuration } from '../core/runs';
import { LivenessTracker } from '../engine/liveness';
import type { StepOutcome } from '../engine/steps';
import { UsageLimitWatcher } from './usage-limits';

interface AgentWatchOptions {
  step: AgentStep;
  /** The run's own signal (a person cancels): `signal` is aborted with it. */
  cancelled?: AbortSignal;
  stallMs: number;
  timeoutMs: number;
  harnessName: string;
  now: () => number;
  /** Stores the liveness word on the step (only when it changes). */
  record(details: { liveness: StepLiveness; livenessSince: number }): void;
  log(line: string): void;
  /** The stall notice (an inbox item), once per process. */
  stalled(message: string): void;
  /** `; the last error … reported: …`, or ''. */
  lastErrorSuffix(): string;
}

/** How often the silence is looked at: often enough for `quiet` after a minute and a short stallSec. */
function checkEveryMs(stallMs: number): number {
  return Math.max(50, Math.min(stallMs / 4, 15_000));
}

export class AgentWatch {
  private readonly controller = new AbortController();
  private readonly liveness: LivenessTracker;
  private readonly limits: UsageLimitWatcher;
  private readonly timer: ReturnType<typeof setInterval>;
  private stallMessage: string | undefined;
  /** What the stall did to the process: stopped it to cancel or to retry the step. */
  private stopped: 'cancel' | 'retry' | undefined;

  constructor(private readonly options: AgentWatchOptions) {
    this.liveness = new LivenessTracker({ now: options.now, stallMs: options.stallMs, report: ({ liveness, since }) => options.record({ liveness, livenessSince: since }) });
    this.limits = new UsageLimitWatcher(options.now);
    this.timer = setInterval(() => this.check(), checkEveryMs(options.stallMs));
    if (options.cancelled?.aborted) this.controller.abort();
    options.cancelled?.addEventListener('abort', this.passOnCancel);
  }

  private readonly passOnCancel = (): void => this.controller.abort();

  /** Aborted when a stall stops the process (onStall cancel or retry) or the run is cancelled. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** One line of the CLI's stdout or stderr. */
  line(text: string): void {
    this.liveness.output();
    this.limits.see(text);
  }

  /** Looks at the silence now (the timer calls it; tests may too). */
  check(): void {
    if (this.liveness.check() !== 'stalled' || this.stallMessage !== undefined) return;
    const { step, timeoutMs } = this.options;
    const policy = step.onStall ?? 'notify';
    const silent = formatDuration(this.options.now() - this.liveness.lastOutput);
    const then = policy === 'cancel' ? 'the step is cancelled (onStall: cancel)'
      : policy === 'retry' ? 'the agent is stopped to try the step again (onStall: retry)'
      : `it is stopped after its timeout of ${formatDuration(timeoutMs)}`;
    this.stallMessage = `No output for ${silent}: the agent may be stuck; ${then}${this.options.lastErrorSuffix()}`;
    this.options.log(this.stallMessage);
    this.options.stalled(this.stallMessage);
    if (policy !== 'notify') {
      this.stopped = policy;
      this.controller.abort();
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.options.cancelled?.removeEventListener('abort', this.passOnCancel);
  }

  /**
   * The attempt's outcome given what was watched: a stall that stopped the process cancels the step
   * or fails this attempt (to be tried again); a failure on the model's usage limit is `rateLimited`.
   * `userCancelled`: the run was cancelled meanwhile (that outcome stands).
   */
  settle(outcome: StepOutcome, userCancelled: boolean, timedOut: boolean): StepOutcome {
    if (this.stopped && !userCancelled) {
      const error = this.stallMessage!;
      if (this.stopped === 'cancel') return { status: 'cancelled', error };
      const kept = outcome.status === 'failed' || outcome.status === 'succeeded' ? outcome : undefined;
      return { status: 'failed', ...(kept?.output !== undefined ? { output: kept.output } : {}), ...(kept?.usage ? { usage: kept.usage } : {}), error };
    }
    const hit = this.limits.hit;
    if (hit && outcome.status === 'failed' && !timedOut) {
      return { status: 'rateLimited', harness: this.options.harnessName, message: hit.message, ...(hit.resetsAt !== undefined ? { resetsAt: hit.resetsAt } : {}), ...(outcome.output ? { output: outcome.output } : {}), ...(outcome.usage ? { usage: outcome.usage } : {}) };
    }
    return outcome;
  }
}

/** The prompt of an attempt that goes on in its own session after the model's usage limit. */
export function continuationPrompt(prompt: string): string {
  return `Your previous turn was cut off by the model provider's usage limit. Carry on with the task from where you stopped; the task, for reference:\n\n${prompt}`;
}
