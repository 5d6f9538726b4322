// Reading runs: lists (slim), one run whole (from disk once finished), and pages or downloads of
// their logs. Nothing here changes a run.

import type { LogLine, Run, StepRun } from '../core/api';
import { ValidationError, quote } from '../core/errors';
import { copyRun, isFinished, matchesFilter, slimRun, validateRunFilter, type StoredStepRun } from '../core/runs';
import type { RunState } from './run-state';

/** The latest runs that match the filter, newest first, slim. */
export function listRuns(state: RunState, filterInput?: unknown): Run[] {
  const filter = validateRunFilter(filterInput);
  const found: Run[] = [];
  for (let index = state.order.length - 1; index >= 0 && found.length < filter.limit; index--) {
    const run = state.runs.get(state.order[index]!)!;
    if (matchesFilter(run, filter)) found.push(slimRun(run));
  }
  return found;
}

/** Every run, oldest first, as kept in memory (slim when finished). Treat as read-only. */
export function* allRuns(state: RunState): Iterable<Run> {
  for (const id of state.order) yield state.runs.get(id)!;
}

/** The full run: outputs, rendered prompts and the pipeline snapshot; undefined for an unknown id. */
export async function getRun(state: RunState, id: unknown): Promise<Run | undefined> {
  if (typeof id !== 'string') throw new ValidationError(`getRun takes a run id, not ${quote(id)}`);
  const run = state.runs.get(id);
  if (!run) return undefined;
  if (!isFinished(run.status)) return copyRun(run);
  const stored = await state.options.store.read(id);
  // The budget ledger is the engine's (core/runs.ts StoredStepRun), as in copyRun.
  for (const step of (stored?.steps ?? []) as StoredStepRun[]) delete step.budgetLedger;
  return stored ?? run;
}

/** A page of one step attempt's log (default: the latest attempt, its last 1,000 lines; see LogPage). */
export async function readStepLog(state: RunState, runId: unknown, stepId: unknown, attempt?: unknown, page?: unknown): Promise<LogLine[]> {
  const { run, step, wanted } = locateLog(state, runId, stepId, attempt);
  return wanted === 0 ? [] : state.logs.read(run.id, step.id, wanted, page);
}

/** A page of the run's setup log. */
export async function readRunLog(state: RunState, runId: unknown, page?: unknown): Promise<LogLine[]> {
  return state.logs.read(state.requireRun(runId).id, '', 0, page);
}

/** The whole log of a step attempt ('' for setup), for a download: its file, or its lines (older logs). */
export async function logDownload(state: RunState, runId: unknown, stepId: unknown, attempt?: unknown): Promise<{ path: string } | { lines: string[] } | undefined> {
  if (stepId === '') return state.options.store.logs.logDownload(state.requireRun(runId).id, '', 0);
  const { run, step, wanted } = locateLog(state, runId, stepId, attempt);
  return wanted === 0 ? undefined : state.options.store.logs.logDownload(run.id, step.id, wanted);
}

function locateLog(state: RunState, runId: unknown, stepId: unknown, attempt: unknown): { run: Run; step: StepRun; wanted: number } {
  const run = state.requireRun(runId);
  const step = state.requireStep(run, stepId);
  if (attempt === undefined || attempt === null) return { run, step, wanted: step.attempt };
  if (!Number.isInteger(attempt) || (attempt as number) < 1) throw new ValidationError(`attempt must be a whole number from 1, not ${quote(attempt)}`);
  return { run, step, wanted: attempt as number };
}
