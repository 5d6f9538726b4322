// The cause of a failed step (StepRun.cause, found by the engine: core/failure-cause.ts) as the run
// page shows it: "Likely cause · line 6" and the line's text, a link to that line of the attempt's
// log, where the log view highlights it.

import type { StepRun } from '../../src/core/api';
import { h } from '../dom';

/** The address of line `n` of a step attempt's log (run.ts reads it back when the page opens). */
export function lineHref(runId: string, stepId: string, attempt: number, n: number): string {
  return `#/runs/${encodeURIComponent(runId)}?step=${encodeURIComponent(stepId)}&attempt=${attempt}#L${n}`;
}

/**
 * A shell step's error without the last stderr line it quotes ("Exited with code 254: npm error A
 * complete log …" → "Exited with code 254"), when a cause names a better line; else the error.
 */
export function errorBeforeCause(error: string, step: Pick<StepRun, 'kind' | 'cause'>): string {
  if (!step.cause || step.kind !== 'shell') return error;
  return /^(Exited with code \d+|Killed by \S+): /.exec(error)?.[1] ?? error;
}

/**
 * The link to a failed step's cause, or null without one. `open` shows the line in place (the
 * page is not built again); the href is for a new tab and for copying.
 */
export function causeLink(runId: string, step: StepRun, open: (stepId: string, attempt: number, line: number) => void): HTMLElement | null {
  const cause = step.cause;
  if (!cause || step.attempt < 1) return null;
  return h('a', {
    class: 'failure-cause', 'data-test': 'failure-cause', href: lineHref(runId, step.id, step.attempt, cause.line),
    onclick: (event: Event) => {
      const mouse = event as MouseEvent;
      if (mouse.ctrlKey || mouse.metaKey || mouse.shiftKey || mouse.button !== 0) return;
      event.preventDefault();
      open(step.id, step.attempt, cause.line);
    },
  }, h('span', { class: 'failure-cause-where' }, `Likely cause · line ${cause.line}`), h('code', { class: 'failure-cause-text' }, cause.text));
}
