// Where the sign-in link lands (`/pair` sends the browser to `#/waiting`): with an approval
// pending, on what waits (UI.md "The phone goes to what waits"). One run waiting for a decision:
// its page, where the approval card comes first; several: Runs filtered to the waiting ones;
// none: Runs. The address is replaced, so Back does not come here again.

import type { Run, Snapshot } from '../../src/core/api';
import type { ScreenFactory } from '../app';
import { h } from '../dom';

/** Runs whose approval step waits for a person (not a step waiting out a usage limit). */
function runsWaitingForApproval(snapshot: Snapshot | undefined): Run[] {
  return (snapshot?.runs ?? []).filter((run) => run.status === 'waiting' && run.steps.some((step) => step.kind === 'approval' && step.status === 'waiting'));
}

/** The address of what waits: one run's page, Runs filtered to the waiting runs, or Runs. */
function waitingAddress(snapshot: Snapshot | undefined): string {
  const waiting = runsWaitingForApproval(snapshot);
  if (waiting.length === 1) return `#/runs/${encodeURIComponent(waiting[0]!.id)}`;
  return waiting.length > 1 ? '#/runs?status=waiting' : '#/runs';
}

export const waitingScreen: ScreenFactory = (context) => {
  const address = waitingAddress(context.state.snapshot);
  // After this screen is shown: the hash change shows the screen it names.
  queueMicrotask(() => location.replace(address));
  return { element: h('section', { class: 'page' }, h('p', { class: 'meta' }, 'Opening what waits…')) };
};
