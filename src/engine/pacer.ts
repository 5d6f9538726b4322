// The one pacer of events (DESIGN §4): turns the engine's many small changes into the spec's
// paced events: `run` coalesced per run (about every 60 ms, the latest state wins), `logs` batched
// (about every 80 ms, in order) and `snapshot` at most once per 250 ms, always once after the
// last change.

import type { LogLine, Run, Snapshot } from '../core/api';
import { setTimer } from '../core/timers';
import type { EventHub } from './events';

export const runEventInterval = 60;
export const logEventInterval = 80;
export const snapshotInterval = 250;

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimer(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => performance.now(),
};

export class EventPacer {
  private readonly pendingRuns = new Map<string, () => Run>();
  private pendingLogs: LogLine[] = [];
  /** Where live log lines are taken from when the logs event goes out (the run logs' feed). */
  private logSource: (() => LogLine[]) | undefined;
  private runTimer: unknown;
  private logTimer: unknown;
  /** The snapshot to send, and when the last one went. */
  private snapshotView: (() => Snapshot) | undefined;
  private snapshotTimer: unknown;
  private lastSnapshotAt = -Infinity;

  constructor(private readonly hub: EventHub, private readonly timers: Timers = realTimers) {}

  /**
   * Announces that a run changed. `view` is called when the event goes out, so a burst of
   * changes costs one copy of the run, and the event always carries the latest state.
   */
  runChanged(runId: string, view: () => Run): void {
    this.pendingRuns.set(runId, view);
    this.runTimer ??= this.timers.setTimeout(() => this.flushRuns(), runEventInterval);
  }

  /** Forgets pending changes of a deleted run (its `run-deleted` event follows). */
  forgetRun(runId: string): void {
    this.pendingRuns.delete(runId);
  }

  /** Queues log lines; they go out in arrival order. */
  log(lines: readonly LogLine[]): void {
    if (lines.length === 0) return;
    for (const line of lines) this.pendingLogs.push(line);
    this.logTimer ??= this.timers.setTimeout(() => this.flushLogs(), logEventInterval);
  }

  /** Live lines are waiting in `take`: they go out with the next logs event. */
  logsReady(take: () => LogLine[]): void {
    this.logSource = take;
    this.logTimer ??= this.timers.setTimeout(() => this.flushLogs(), logEventInterval);
  }

  /**
   * Announces that something in the snapshot changed; `view` makes it when the event goes out: at
   * once when none went out in the last 250 ms, else when that time is up.
   */
  snapshotChanged(view: () => Snapshot): void {
    this.snapshotView = view;
    this.snapshotTimer ??= this.timers.setTimeout(() => this.flushSnapshot(), Math.max(0, this.lastSnapshotAt + snapshotInterval - this.timers.now()));
  }

  flushSnapshot(): void {
    if (this.snapshotTimer !== undefined) this.timers.clearTimeout(this.snapshotTimer);
    this.snapshotTimer = undefined;
    const view = this.snapshotView;
    this.snapshotView = undefined;
    if (!view) return;
    this.lastSnapshotAt = this.timers.now();
    this.hub.emit('snapshot', view());
  }

  flushRuns(): void {
    if (this.runTimer !== undefined) this.timers.clearTimeout(this.runTimer);
    this.runTimer = undefined;
    const views = [...this.pendingRuns.values()];
    this.pendingRuns.clear();
    for (const view of views) this.hub.emit('run', view());
  }

  flushLogs(): void {
    if (this.logTimer !== undefined) this.timers.clearTimeout(this.logTimer);
    this.logTimer = undefined;
    const batch = this.pendingLogs;
    this.pendingLogs = [];
    if (this.logSource) batch.push(...this.logSource());
    if (batch.length === 0) return;
    this.hub.emit('logs', batch);
  }

  /** Sends everything pending now (on shutdown, so no change is lost at the end). */
  flush(): void {
    this.flushLogs();
    this.flushRuns();
    this.flushSnapshot();
  }
}
