// Deleting with Undo (UI.md "Undo beats confirm"): a pipeline, a trigger or the Inbox's items leave their list at once,
// and the engine is asked to delete it only when the Undo toast ends (`withUndo`, the one Undo
// toast). Undo puts it back and nothing reaches the engine. Meanwhile it still exists there (a
// trigger's URL still answers); a window closed before the toast ends deletes nothing.

import type { AppContext } from '../app';
import { withUndo } from './dialog';

/** Ids whose deletion waits for its Undo toast: lists leave them out. */
const pending = new Set<string>();

export function isPendingDeletion(id: string): boolean {
  return pending.has(id);
}

/**
 * Hides `ids` now and deletes them when the toast ends: `remove` calls the engine, `forget` takes
 * them out of the snapshot (so they do not flash back before the engine's event). A failed delete
 * brings them back and says why.
 */
export function deleteWithUndo(context: AppContext, ids: string[], message: string, remove: () => Promise<void>, forget: () => void): void {
  const release = () => {
    for (const id of ids) pending.delete(id);
    context.state.changed();
  };
  for (const id of ids) pending.add(id);
  context.state.changed();
  withUndo(context, message, async () => {
    await remove();
    forget();
    release();
  }, release);
}
