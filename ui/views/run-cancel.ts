// Cancelling a run, with care (UI.md "Undo beats confirm"). A queued run has done nothing yet: it
// is cancelled when the Undo toast ends (the one Undo toast, `withUndo`), so Undo leaves it queued
// and nothing reaches the engine. A running or waiting run cannot be brought back (the engine
// stops its step; a retry starts over), so it asks first: one tap never ends a waiting run.

import type { Run } from '../../src/core/api';
import { errorText, type AppContext } from '../app';
import { confirmAction, withUndo } from './dialog';
import { runTitle } from './runs';

export async function cancelRun(context: AppContext, run: Run, button: HTMLButtonElement): Promise<void> {
  const label = button.textContent;
  const busy = (text: string | null) => {
    button.disabled = text !== null;
    button.textContent = text ?? label;
  };
  if (run.status === 'queued') {
    busy('Cancelling…');
    withUndo(context, `Cancelled “${runTitle(run)}”`, async () => {
      await context.api.cancelRun(run.id);
      busy(null);
    }, () => busy(null));
    return;
  }
  const confirmed = await confirmAction({
    title: `Cancel the run “${runTitle(run)}”?`,
    body: run.status === 'waiting'
      ? 'It is waiting for a decision: cancelling ends it without one. This cannot be undone; Retry starts its steps again.'
      : 'Its running step is stopped. This cannot be undone; Retry starts its steps again.',
    confirm: 'Cancel the run',
    dismiss: run.status === 'waiting' ? 'Keep it waiting' : 'Keep it running',
    danger: true,
  });
  if (!confirmed) return;
  busy('Cancelling…');
  try {
    await context.api.cancelRun(run.id);
    context.toast('Run cancelled');
  } catch (error) {
    context.toast(errorText(error), 'error');
  } finally {
    busy(null);
  }
}
