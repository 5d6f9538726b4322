// Polling: each enabled tracker trigger asks its service for issues every `pollIntervalSec`
// (jittered by ±10% so triggers spread out), and admits what it finds. The first poll (and the
// first after a reset) is full; later polls ask only for what changed since the cursor. A failure
// is kept in the state and the ledger, told once per failure streak, and backs the polls off; a
// rate limit pauses polling until it lifts, or for an hour at most (then the next poll reads the
// reset anew). A poll that fails halfway keeps its cursor, so the next one sees the same issues
// again and dedup starts nothing twice. `stop()` aborts the polls under way.

import type { Connection, TriggerConfig, TriggerKind, TriggerState } from '../core/api';
import { ConflictError, errorMessage } from '../core/errors';
import { setTimer } from '../core/timers';
import { defaultPollIntervalSec } from '../core/trigger-config';
import type { Admission } from './admission';
import { ProviderError, type TrackerProvider } from './provider';
import type { TriggerStates } from './trigger-state';

/** The longest pause after failures in a row (doubling from the poll interval). */
const maxBackoffMs = 3600_000;
/**
 * The longest pause for a rate limit: a reset further ahead (a month, a wrong clock, a hostile
 * server) is read anew by the poll after this one, instead of silencing the trigger for that long.
 */
export const maxRateLimitPauseMs = 3600_000;
/** The first poll of a trigger that has never polled, or whose time passed while Factory was off. */
const defaultFirstPollDelayMs = 2000;

interface PollerOptions {
  states: TriggerStates;
  admission: Admission;
  providers: Partial<Record<TriggerKind, TrackerProvider>>;
  triggers: () => readonly TriggerConfig[];
  connection: (id: string | undefined) => Connection | undefined;
  /** A poll failed after one that worked: one notice per failure streak. */
  failed: (trigger: TriggerConfig, message: string) => void;
  now: () => number;
  random?: () => number;
  /** How soon a trigger polls that never did, or whose time passed (default 2 s). */
  firstPollDelayMs?: number;
  /** After each poll that worked: reads the approval commands on the issues whose run waits (approval-commands.ts). */
  afterPoll?: (trigger: TriggerConfig, signal: AbortSignal) => Promise<void>;
}

export class Poller {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly polls = new Map<string, Promise<void>>();
  /** Failures in a row, by trigger id. */
  private readonly failures = new Map<string, number>();
  /** Aborts the requests of the polls under way when Factory stops. */
  private readonly stopping = new AbortController();
  private stopped = false;

  constructor(private readonly options: PollerOptions) {}

  /** (Re)schedules every enabled tracker trigger, and forgets the others. Call after any change. */
  schedule(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    if (this.stopped) return;
    for (const trigger of this.options.triggers()) {
      if (!this.options.providers[trigger.kind] || !this.options.states.has(trigger.id)) continue;
      if (trigger.enabled && !this.polls.has(trigger.id)) this.plan(trigger);
      else if (!trigger.enabled) delete this.options.states.entry(trigger.id).file.state.nextPollAt;
    }
  }

  /** True while the trigger is still configured and enabled (a poll under way stops otherwise). */
  private wanted(triggerId: string): boolean {
    return this.options.triggers().some((trigger) => trigger.id === triggerId && trigger.enabled);
  }

  /** Polls now (or waits for the poll under way) and returns the state. */
  async pollNow(trigger: TriggerConfig): Promise<TriggerState> {
    const state = this.options.states.entry(trigger.id).file.state;
    if (!this.options.providers[trigger.kind]) return state;
    if (!trigger.enabled) throw new ConflictError(`Trigger ${trigger.name} is disabled: enable it to poll`);
    if (this.stopped) return state;
    if ((state.rateLimitedUntil ?? 0) > this.options.now()) {
      this.options.states.record(trigger.id, { at: this.options.now(), source: 'poll', decision: `poll skipped: rate limited until ${new Date(state.rateLimitedUntil!).toISOString()}` });
      return state;
    }
    await (this.polls.get(trigger.id) ?? this.start(trigger));
    return state;
  }

  /** Stops scheduling, aborts the polls under way (their request, and the pages after it) and waits for them to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.stopping.abort();
    await Promise.all(this.polls.values());
  }

  /** Sets the timer of the next poll: after the interval, the backoff, or the rate limit. */
  private plan(trigger: TriggerConfig): void {
    const state = this.options.states.entry(trigger.id).file.state;
    const now = this.options.now();
    const intervalMs = (trigger.pollIntervalSec ?? defaultPollIntervalSec) * 1000;
    const failures = this.failures.get(trigger.id) ?? 0;
    const pause = Math.min(intervalMs * 2 ** failures, Math.max(intervalMs, maxBackoffMs));
    const jittered = pause * (0.9 + 0.2 * (this.options.random ?? Math.random)());
    const soon = now + (this.options.firstPollDelayMs ?? defaultFirstPollDelayMs);
    const due = state.lastPollAt === undefined ? soon : Math.max(soon, state.lastPollAt + jittered);
    const at = Math.max(due, state.rateLimitedUntil ?? 0);
    state.nextPollAt = at;
    const timer = setTimer(() => {
      this.timers.delete(trigger.id);
      const current = this.options.triggers().find((candidate) => candidate.id === trigger.id);
      if (current && this.wanted(current.id)) void this.start(current);
    }, at - now);
    timer.unref();
    this.timers.set(trigger.id, timer);
    this.options.states.changed(trigger.id);
  }

  private start(trigger: TriggerConfig): Promise<void> {
    clearTimeout(this.timers.get(trigger.id));
    this.timers.delete(trigger.id);
    const poll = this.poll(trigger).finally(() => {
      this.polls.delete(trigger.id);
      this.schedule();
    });
    this.polls.set(trigger.id, poll);
    return poll;
  }

  private async poll(trigger: TriggerConfig): Promise<void> {
    const { states, admission } = this.options;
    const entry = states.entry(trigger.id);
    const state = entry.file.state;
    const provider = this.options.providers[trigger.kind]!;
    const startedAt = this.options.now();
    const { resetAt } = entry.file;
    const fullDue = provider.fullPollEveryMs !== undefined && startedAt - (entry.file.fullPollAt ?? 0) >= provider.fullPollEveryMs;
    const cursor = fullDue ? undefined : entry.file.cursor;
    const { signal } = this.stopping;
    try {
      const connection = this.options.connection(trigger.connectionId);
      if (!connection) throw new ProviderError(`The account of this trigger no longer exists: choose another one`);
      const yielded = new Set<string>();
      const pages = provider.poll(trigger, connection, cursor, signal);
      let page = await pages.next();
      while (!page.done && this.wanted(trigger.id) && !signal.aborted) {
        // A page is admitted at once: the runs it starts share the journal's group commits.
        await Promise.all(page.value.map((observed) => {
          yielded.add(observed.key);
          if (observed.updatedAt !== undefined && entry.seen.get(observed.key) === observed.updatedAt) return undefined; // decided on this version already
          return admission.admit(trigger, observed, 'poll');
        }));
        page = await pages.next();
      }
      if (!page.done) return void (await pages.return(undefined));
      if (entry.file.resetAt !== resetAt) return; // reset meanwhile: the next poll is a full one
      if (cursor === undefined) {
        await admission.leaveUnseen(trigger, yielded, startedAt);
        entry.file.fullPollAt = startedAt;
      }
      entry.file.cursor = page.value ?? cursor;
      await this.options.afterPoll?.(trigger, signal);
      this.failures.delete(trigger.id);
      delete state.lastError;
      delete state.rateLimitedUntil;
    } catch (error) {
      if (signal.aborted) {
        // Stopped, not failed: the next start polls again from the same cursor.
        states.record(trigger.id, { at: this.options.now(), source: 'poll', decision: 'poll stopped: Factory is stopping' });
        return;
      }
      const retryAt = error instanceof ProviderError ? error.retryAt : undefined;
      const message = retryAt === undefined ? errorMessage(error) : this.rateLimited(trigger.id, provider.name, errorMessage(error), retryAt);
      const wasFailing = state.lastError !== undefined;
      state.lastError = message;
      this.failures.set(trigger.id, (this.failures.get(trigger.id) ?? 0) + (retryAt === undefined ? 1 : 0));
      states.record(trigger.id, { at: this.options.now(), source: 'poll', decision: retryAt === undefined ? `poll failed: ${message}` : message });
      if (!wasFailing && retryAt === undefined) this.options.failed(trigger, message);
    } finally {
      if (!signal.aborted) state.lastPollAt = startedAt;
      states.changed(trigger.id);
    }
  }

  /**
   * Pauses the trigger's polls for a rate limit that `service` says lifts at `retryAt`, for
   * `maxRateLimitPauseMs` at most, and says so: `said`, after the time polling resumes (and the
   * service's own time, when that is further ahead).
   */
  private rateLimited(triggerId: string, service: string, said: string, retryAt: number): string {
    const now = this.options.now();
    const resumeAt = Math.min(Number.isFinite(retryAt) ? retryAt : Number.POSITIVE_INFINITY, now + maxRateLimitPauseMs);
    this.options.states.entry(triggerId).file.state.rateLimitedUntil = resumeAt;
    const further = resumeAt < retryAt || !Number.isFinite(retryAt) ? ` (${service} named ${readableTime(retryAt)}; Factory asks again after ${maxRateLimitPauseMs / 60_000} minutes and reads the reset anew)` : '';
    return `Rate limited until ${readableTime(resumeAt)}${further}: ${said}`;
  }
}

/** An epoch time as ISO 8601, or words when it is beyond what a Date can show. */
function readableTime(at: number): string {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? 'a time too far ahead to read' : date.toISOString();
}
