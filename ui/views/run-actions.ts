// A run's actions in its header: Cancel (run-cancel.ts), Retry ▾ from the start or from a step,
// Delete; and `runAction`, which shows an action's progress on its button and its error in a toast.

import type { Run, RunStatus } from '../../src/core/api';
import { errorText, type AppContext } from '../app';
import { h } from '../dom';
import { confirmAction } from './dialog';
import { cancelRun } from './run-cancel';
import { runTitle } from './runs';

export const finished: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled', 'rejected'];
const cancellable: readonly RunStatus[] = ['queued', 'running', 'waiting'];

/** The buttons for `current`: Cancel while it may run, Retry ▾ and Delete once it finished. `retried` takes the run a retry started. */
export function runActions(context: AppContext, current: Run, retried: (run: Run) => void): HTMLElement[] {
  const buttons: HTMLElement[] = [];
  if (cancellable.includes(current.status)) {
    // Asks first, or (queued) undoes: run-cancel.ts.
    const cancel: HTMLButtonElement = h('button', { type: 'button', 'data-test': 'cancel', onclick: () => void cancelRun(context, current, cancel) }, 'Cancel');
    buttons.push(cancel);
  }
  if (finished.includes(current.status)) {
    buttons.push(retryMenu(context, current, retried));
    const remove: HTMLButtonElement = h('button', { type: 'button', class: 'danger', 'data-test': 'delete', onclick: async () => {
      if (!await confirmAction({ title: `Delete the run “${runTitle(current)}”?`, body: 'Its logs are deleted too. This cannot be undone.', confirm: 'Delete', danger: true })) return;
      void runAction(context, remove, 'Deleting…', async () => {
        const kept = await context.api.deleteRun(current.id);
        context.toast(kept ? `Run deleted: ${kept}` : 'Run deleted');
        context.navigate('#/runs');
      });
    } }, 'Delete');
    buttons.push(remove);
  }
  return buttons;
}

function retryMenu(context: AppContext, current: Run, onRetried: (run: Run) => void): HTMLElement {
  const summary = h('summary', { class: 'button', 'data-test': 'retry', 'aria-haspopup': 'menu' }, 'Retry ▾');
  const menu = h('div', { class: 'menu-list', role: 'menu' });
  const details = h('details', { class: 'menu' }, summary, menu);
  const choices: [string | undefined, string][] = [[undefined, 'From the start'], ...current.steps.map((step): [string, string] => [step.id, `From “${step.name}”`])];
  for (const [stepId, text] of choices) {
    const item: HTMLButtonElement = h('button', { type: 'button', role: 'menuitem', 'data-test': 'retry-from', 'data-step-id': stepId ?? '', onclick: () => void runAction(context, item, 'Retrying…', async () => {
      for (const other of menu.querySelectorAll('button')) other.disabled = true;
      try {
        const retried = await context.api.retryRun(current.id, stepId);
        details.open = false;
        context.toast(stepId ? `Retrying from “${current.steps.find((step) => step.id === stepId)?.name ?? stepId}”` : 'Retrying from the start');
        onRetried(retried);
      } finally {
        for (const other of menu.querySelectorAll('button')) other.disabled = false;
      }
    }) }, text);
    menu.appendChild(item);
  }
  details.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && details.open) {
      details.open = false;
      summary.focus();
    }
  });
  return details;
}

/** Runs `action` with `button` disabled and saying `busyText`; an error becomes a toast. */
export async function runAction(context: AppContext, button: HTMLButtonElement, busyText: string, action: () => Promise<void>): Promise<void> {
  const label = button.textContent;
  button.disabled = true;
  button.textContent = busyText;
  try {
    await action();
  } catch (error) {
    context.toast(errorText(error), 'error');
  } finally {
    button.disabled = false;
    button.textContent = label;
  }
}
