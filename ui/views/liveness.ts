// How a running step is doing and what a run cost, in words (issue 24.4, 24.5): "quiet for 4 min",
// "rate limited, resumes 14:05"; "41.2k tokens · $0.62". Elements made here carry their data so the
// screens' one-second tickers keep the minutes current without re-rendering (`tickLiveness`).
import type { StepRun, StepUsage } from '../../src/core/api';
import { h } from '../dom';

function formatTokens(count: number): string {
  return count >= 10_000 ? `${Math.round(count / 1000)}k` : count >= 1000 ? `${(count / 1000).toFixed(1)}k` : String(count);
}

/** Usage as short parts: `41k tokens`, `$0.62`; none when nothing was reported. */
export function usageParts(usage: StepUsage | undefined): string[] {
  if (!usage) return [];
  const parts: string[] = [];
  const tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
  if (tokens > 0) parts.push(`${formatTokens(tokens)} tokens`);
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(usage.costUsd < 0.1 ? 3 : 2)}`);
  return parts;
}

/** A clock time as people read it here: `14:05`, or `28 Nov, 14:05` on another day. */
function clockTime(at: number, now: number): string {
  const time = new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return new Date(at).toDateString() === new Date(now).toDateString() ? time : `${new Date(at).toLocaleDateString([], { day: 'numeric', month: 'short' })}, ${time}`;
}

function minutesFor(since: number | undefined, now: number): string {
  if (since === undefined) return '';
  const minutes = Math.max(0, Math.floor((now - since) / 60_000));
  return minutes < 1 ? ' for under a minute' : minutes < 120 ? ` for ${minutes} min` : ` for ${Math.floor(minutes / 60)} h`;
}

/** The step's liveness in words, or '' for a step that has none (not running, or an older Factory). */
function livenessWords(step: Pick<StepRun, 'liveness' | 'livenessSince' | 'resumeAt'>, now = Date.now()): string {
  switch (step.liveness) {
    case 'working':
      return 'working';
    case 'quiet':
      return `quiet${minutesFor(step.livenessSince, now)}`;
    case 'stalled':
      return `stalled: no output${minutesFor(step.livenessSince, now)}`;
    case 'rateLimited':
      return step.resumeAt ? `rate limited, resumes ${clockTime(step.resumeAt, now)}` : 'rate limited';
    default:
      return '';
  }
}

/** The words as an element the tickers keep current; null when there are none. */
export function livenessElement(step: StepRun, now = Date.now()): HTMLElement | null {
  const text = livenessWords(step, now);
  if (!text) return null;
  return h('span', {
    class: `liveness liveness-${step.liveness}`, 'data-test': 'liveness', 'data-liveness': step.liveness,
    ...(step.livenessSince !== undefined ? { 'data-since': step.livenessSince } : {}), ...(step.resumeAt !== undefined ? { 'data-resume-at': step.resumeAt } : {}),
  }, text);
}

/** Brings every liveness element under `root` up to date (a ticker calls it each second). */
export function tickLiveness(root: ParentNode, now = Date.now()): void {
  for (const element of root.querySelectorAll<HTMLElement>('.liveness[data-liveness]')) {
    const text = livenessWords({
      liveness: element.dataset.liveness as StepRun['liveness'],
      ...(element.dataset.since ? { livenessSince: Number(element.dataset.since) } : {}),
      ...(element.dataset.resumeAt ? { resumeAt: Number(element.dataset.resumeAt) } : {}),
    }, now);
    if (element.textContent !== text) element.textContent = text;
  }
}

/** What of a run's liveness and usage the screens show, as a key: a change re-renders them. */
export function livenessKey(steps: readonly StepRun[], usage: StepUsage | undefined): string {
  return JSON.stringify([usage, steps.map((step) => [step.liveness, step.livenessSince, step.resumeAt, step.usage])]);
}
