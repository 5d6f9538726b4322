// Waiting out the model provider's usage limit (issue 24.3). An agent attempt that ended on the
// provider's rate or usage limit (harness/usage-limits.ts) is not a failure: the step waits until the
// reset the CLI named, else 1, 2, 4 … minutes (at most an hour) after each wait in a row, and then
// goes on with the same attempt, resuming the agent's session. Waiting is the run's `waiting` status
// with the step `waiting`, `liveness: 'rateLimited'` and `resumeAt`: the run holds no slot, and
// run.json says when to go on, so a restart arms the timer again. 24 hours after the first wait (or
// at once, when the named reset is further away than that) the step fails in words.

import type { StepRun, StepUsage } from '../core/api';
import type { StoredStepRun } from '../core/runs';
import { setTimer } from '../core/timers';

/** The longest time a step waits for the model's usage limit, counted from its first wait. */
export const maxRateLimitWaitMs = 24 * 3600_000;
/** The first wait when the CLI names no reset time; each wait in a row doubles it. */
export const firstBackoffMs = 60_000;
/** The longest single wait when the CLI names no reset time. */
export const longestBackoffMs = 3600_000;

/** What run.json keeps about a step's waits in a row (never sent to a caller: core/runs.ts strips it). */
interface RateLimitHistory {
  /** When the first of these waits began. */
  since: number;
  waits: number;
  /** The step was let go on after a wait: its next start continues the same attempt. */
  continuing?: boolean;
}

/** The limit an attempt ended on, as the agent runner reports it. */
interface RateLimitReport {
  /** The harness's name, for the words of a failure. */
  harness?: string;
  /** When the CLI says the limit resets (epoch ms); absent when it named no time. */
  resetsAt?: number;
  /** The CLI's words. */
  message: string;
}

type RateLimitDecision = { wait: true; resumeAt: number; history: RateLimitHistory } | { wait: false; error: string };

/** Words for a time on this machine's clock, e.g. `27 Nov 2026, 14:05`. */
export function clockWords(epoch: number): string {
  return new Date(epoch).toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * When a step that hit the limit goes on, given its waits so far: at the named reset when it is
 * still ahead, else after the backoff for this wait. Fails (in words, naming the limit) when that
 * is more than `maxRateLimitWaitMs` after the first wait.
 */
export function decideRateLimitWait(previous: RateLimitHistory | undefined, hit: RateLimitReport, now: number, harnessName = hit.harness ?? 'The agent'): RateLimitDecision {
  const since = previous?.since ?? now;
  const waits = (previous?.waits ?? 0) + 1;
  const backoff = Math.min(firstBackoffMs * 2 ** Math.min(waits - 1, 20), longestBackoffMs);
  const resumeAt = hit.resetsAt !== undefined && hit.resetsAt > now ? hit.resetsAt : now + backoff;
  if (resumeAt - since > maxRateLimitWaitMs) {
    const error = hit.resetsAt !== undefined && hit.resetsAt > now && waits === 1
      ? `${harnessName} hit the model's usage limit (${hit.message}); it resets ${clockWords(hit.resetsAt)}, more than 24 hours away, so the step stopped waiting: retry the run after that`
      : `${harnessName} was still rate limited after waiting since ${clockWords(since)} (${waits - 1} waits; the most is 24 hours): ${hit.message.replace(/\.$/, '')}. Retry the run when the limit has reset`;
    return { wait: false, error };
  }
  return { wait: true, resumeAt, history: { since, waits } };
}

/** The step's stored waits. */
export function rateLimitHistory(step: StepRun): RateLimitHistory | undefined {
  return (step as StoredStepRun).rateLimit;
}

/** A step that waits out the model's limit now (what `approveStep` lets go on at once). */
export function isRateLimitWait(step: StepRun): boolean {
  return step.status === 'waiting' && step.liveness === 'rateLimited';
}

/**
 * Marks `step` as waiting until `resumeAt` (status, liveness, resumeAt, stored history); the usage
 * of the cut-off attempt stays on the step.
 */
export function markRateLimitWait(step: StepRun, decision: Extract<RateLimitDecision, { wait: true }>, usage: StepUsage | undefined): void {
  Object.assign(step, { status: 'waiting', liveness: 'rateLimited', resumeAt: decision.resumeAt, livenessSince: decision.history.since });
  if (usage) step.usage = usage;
  (step as StoredStepRun).rateLimit = decision.history;
}

/** Lets a waiting step go on: pending again, its next start continuing the same attempt. */
export function releaseRateLimitWait(step: StepRun): void {
  const history = rateLimitHistory(step);
  step.status = 'pending';
  delete step.resumeAt;
  delete step.liveness;
  delete step.livenessSince;
  if (history) history.continuing = true;
}

/** True (once) when the step's next start continues its attempt after a wait; forgets the mark. */
export function takeContinuation(step: StepRun): boolean {
  const history = rateLimitHistory(step);
  if (!history?.continuing) return false;
  delete history.continuing;
  return true;
}

/** The step ended: no liveness word, no wait, its waits in a row forgotten. */
export function clearLiveness(step: StepRun): void {
  delete step.liveness;
  delete step.livenessSince;
  delete step.resumeAt;
  delete (step as StoredStepRun).rateLimit;
}

/** The run's usage: every step's added up (only figures some step reported); undefined when none reported any. */
export function totalUsage(steps: readonly StepRun[]): StepUsage | undefined {
  let total: StepUsage | undefined;
  for (const step of steps) if (step.usage) total = addUsage(total, step.usage);
  return total;
}

/** The usage of two parts of one attempt (before and after a wait) added up; only reported figures. */
export function addUsage(first: StepUsage | undefined, second: StepUsage | undefined): StepUsage | undefined {
  if (!first) return second;
  if (!second) return first;
  const total: StepUsage = {};
  for (const key of ['inputTokens', 'outputTokens', 'costUsd'] as const) {
    if (first[key] !== undefined || second[key] !== undefined) total[key] = (first[key] ?? 0) + (second[key] ?? 0);
  }
  return total;
}

/** One timer per waiting run, firing at its step's `resumeAt` (computed delays go through setTimer). */
export class RateLimitTimers {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(private readonly now: () => number) {}

  /** Calls `fire` at `resumeAt` (at once when it is past); replaces the run's earlier timer. */
  arm(runId: string, resumeAt: number, fire: () => void): void {
    this.disarm(runId);
    // Waits last at most maxRateLimitWaitMs, well within what setTimer honours.
    const timer = setTimer(() => {
      this.timers.delete(runId);
      fire();
    }, resumeAt - this.now());
    timer.unref?.();
    this.timers.set(runId, timer);
  }

  disarm(runId: string): void {
    clearTimeout(this.timers.get(runId));
    this.timers.delete(runId);
  }

  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
