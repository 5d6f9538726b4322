// The queue and the slots: queued runs start oldest first while the global, per-pipeline and
// per-runner caps allow, each driven by the step driver until it waits or ends. The queue knows
// only that a run is driven, not where its steps execute.

import type { Run } from '../core/api';
import { errorMessage } from '../core/errors';
import { finishRun } from './run-lifecycle';
import type { RunState } from './run-state';

interface ActiveRun {
  controller: AbortController;
  done: Promise<void>;
}

export class RunQueue {
  /** Ids of queued runs, oldest first: what `pump` looks at (never all runs). */
  private queue: string[] = [];
  /** The runs being driven now, each with how to abort it and when it is done. */
  readonly active = new Map<string, ActiveRun>();

  /** `drive` runs a run's steps (step-driver.ts) until it waits or ends. */
  constructor(private readonly state: RunState, private readonly drive: (run: Run, signal: AbortSignal) => Promise<void>) {}

  /** A run read as queued when the service opened (runs are read oldest first). */
  restore(id: string): void {
    this.queue.push(id);
  }

  /** Starts queued runs, oldest first, while the global, per-pipeline and per-runner caps allow. */
  pump(): void {
    if (this.state.stopping) return;
    const cap = this.state.options.config.settings.maxParallelRuns;
    if (this.active.size >= cap) return;
    const runningByPipeline = new Map<string, number>();
    const runningByRunner = new Map<string, number>();
    for (const id of this.active.keys()) {
      const { pipelineId, runnerId = 'local' } = this.state.runs.get(id)!;
      runningByPipeline.set(pipelineId, (runningByPipeline.get(pipelineId) ?? 0) + 1);
      runningByRunner.set(runnerId, (runningByRunner.get(runnerId) ?? 0) + 1);
    }
    for (const id of [...this.queue]) {
      if (this.active.size >= cap) break;
      const run = this.state.runs.get(id);
      if (run?.status !== 'queued') {
        this.dequeue(id); // cancelled or deleted while queued
        continue;
      }
      const pipelineCap = this.state.currentPipeline(run)?.maxParallelRuns ?? run.pipeline?.maxParallelRuns;
      const running = runningByPipeline.get(run.pipelineId) ?? 0;
      if (pipelineCap !== undefined && running >= pipelineCap) continue;
      const runnerId = run.runnerId ?? 'local';
      const runnerCap = this.state.options.config.current.runners.find((runner) => runner.id === runnerId)?.maxParallelRuns;
      const onRunner = runningByRunner.get(runnerId) ?? 0;
      if (runnerCap !== undefined && onRunner >= runnerCap) continue;
      runningByPipeline.set(run.pipelineId, running + 1);
      runningByRunner.set(runnerId, onRunner + 1);
      this.dequeue(id);
      this.execute(run);
    }
  }

  /** Adds a run id to the queue in creation order (an approved run goes ahead of newer ones). */
  enqueue(id: string): void {
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
    run.startedAt ??= this.state.now();
    this.state.changed(run);
    this.state.announce({ type: 'started', run, resumed: this.state.resuming.delete(run.id) });
    const entry: ActiveRun = { controller, done: Promise.resolve() };
    entry.done = this.drive(run, controller.signal)
      .catch(async (error) => {
        console.error(`Run ${run.id} failed unexpectedly:`, error);
        await finishRun(this.state, run, 'failed', `Internal error: ${errorMessage(error)}`).catch(() => undefined);
      })
      .finally(() => {
        // An approved run may already be driven again by a newer entry: remove only our own.
        if (this.active.get(run.id) === entry) this.active.delete(run.id);
        this.pump();
      });
    this.active.set(run.id, entry);
  }
}
