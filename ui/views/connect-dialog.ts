// Connecting a tracker account in place: the trigger form opens Settings → Accounts' own form in a
// modal dialog, so the trigger's draft stays where it is and the new account comes back chosen.

import type { ConnectionKind, ConnectionView } from '../../src/core/api';
import type { AppContext } from '../app';
import { h } from '../dom';
import { accountForm } from './accounts';

/**
 * Shows the account form for `kind` in a modal dialog. Resolves with the saved account (already
 * put in the snapshot by the form), or undefined when cancelled (Cancel, Escape). Focus starts in
 * the form and returns where it was.
 */
function connectAccount(context: AppContext, kind: ConnectionKind, kindName: string): Promise<ConnectionView | undefined> {
  const returnTo = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'dialog connect-dialog', 'aria-labelledby': 'connect-title', 'data-test': 'connect-dialog' },
      h('h2', { id: 'connect-title' }, `Connect a ${kindName} account`),
      h('p', {}, 'It is saved in Settings → Accounts and chosen for this trigger; what you typed in the trigger stays.'));
    const close = (saved?: ConnectionView) => {
      if (!dialog.open) return;
      dialog.close();
      dialog.remove();
      returnTo?.focus();
      resolve(saved);
    };
    const form = accountForm(context, undefined, kind, '', { changeKind: () => undefined, done: close });
    // The kind is the trigger's.
    form.querySelector('select')?.setAttribute('disabled', '');
    dialog.append(form);
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      close();
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    form.querySelector<HTMLInputElement>('input')?.focus();
  });
}

/** The button beside a trigger's Account field: connects an account of `kind` in place and hands it to `connected`. */
export function connectButton(context: AppContext, kind: ConnectionKind, kindName: string, connected: (saved: ConnectionView) => void): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'link-button connect-account', 'data-test': 'connect-account' });
  button.addEventListener('click', async () => {
    const saved = await connectAccount(context, kind, kindName);
    if (saved) connected(saved);
  });
  return button;
}
