// Asking before and undoing after: an in-app confirmation dialog (window.confirm blocks the page,
// cannot be styled, and hangs a headless browser) and the Undo toast's deferred commit.

import { errorText, undoWindowMs, type AppContext } from '../app';
import { h } from '../dom';

export interface ConfirmOptions {
  title: string;
  body?: string;
  /** The confirming button's word: 'Delete', 'Reset'. */
  confirm: string;
  /** The confirming button in the danger colour. */
  danger?: boolean;
  /** The cancelling button's words (default 'Cancel'; say what it keeps when the action is itself a cancel). */
  dismiss?: string;
}

/**
 * Asks in a modal dialog. Resolves true when confirmed (the button, or Enter anywhere but on
 * Cancel), false when cancelled (Cancel, Escape). Focus starts on the confirming button, stays in
 * the dialog (the page behind is inert; Tab wraps), and returns where it was.
 */
export function confirmAction(options: ConfirmOptions): Promise<boolean> {
  const returnTo = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const cancel = h('button', { type: 'button', 'data-test': 'dialog-cancel' }, options.dismiss ?? 'Cancel');
  const confirm = h('button', { type: 'button', class: options.danger ? 'danger solid' : 'primary', 'data-test': 'dialog-confirm' }, options.confirm);
  const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'dialog-title', 'aria-describedby': options.body ? 'dialog-body' : undefined },
    h('h2', { id: 'dialog-title' }, options.title),
    options.body ? h('p', { id: 'dialog-body' }, options.body) : null,
    h('div', { class: 'form-actions dialog-actions' }, cancel, confirm));
  return new Promise((resolve) => {
    const close = (confirmed: boolean) => {
      if (!dialog.open) return;
      dialog.close();
      dialog.remove();
      returnTo?.focus();
      resolve(confirmed);
    };
    confirm.addEventListener('click', () => close(true));
    cancel.addEventListener('click', () => close(false));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      close(false);
    });
    dialog.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && event.target !== cancel) {
        event.preventDefault();
        close(true);
      } else if (event.key === 'Tab' && document.activeElement === (event.shiftKey ? cancel : confirm)) {
        event.preventDefault();
        (event.shiftKey ? confirm : cancel).focus();
      }
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    confirm.focus();
  });
}

/**
 * Shows `message` with Undo, and does `commit` only when the toast ends without Undo; Undo calls
 * `undo` and nothing reaches the engine. For actions the engine cannot reverse but the screen can
 * hold back (marking read: there is no "mark unread"). A failed commit undoes and says why.
 */
export function withUndo(context: AppContext, message: string, commit: () => Promise<void>, undo: () => void): void {
  const timer = setTimeout(() => {
    commit().catch((error: unknown) => {
      undo();
      context.toast(errorText(error), 'error');
    });
  }, undoWindowMs);
  context.toast(message, 'ok', () => {
    clearTimeout(timer);
    undo();
  });
}
