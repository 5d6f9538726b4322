// Settings → Accounts: the tracker accounts that triggers read issues with. The form is drawn from
// `accountKinds` (one entry per kind). Keys never come back from the engine: a stored one is only
// announced, and an empty key field keeps it.

import type { ConnectionInput, ConnectionKind, ConnectionView } from '../../src/core/api';
import { errorText, externalLink, type AppContext } from '../app';
import { CallError } from '../call-error';
import { h, replace } from '../dom';
import { confirmAction } from './dialog';
import { watchForm, type Draft } from './drafts';
import { FormFields, copyText, option, resultLine, withBusy } from './settings-form';

interface AccountField {
  name: 'token' | 'baseUrl' | 'email';
  label: string;
  hint: string;
  placeholder?: string;
}

/** The kinds of account offered, and the fields each one asks for (beside the name). */
const accountKinds: { kind: ConnectionKind; name: string; fields: AccountField[] }[] = [
  { kind: 'linear', name: 'Linear', fields: [
    { name: 'token', label: 'API key', hint: 'A personal API key: in Linear, Settings → Security & access.', placeholder: 'lin_api_…' },
    { name: 'baseUrl', label: 'Base URL (optional)', hint: 'API root, default https://api.linear.app; leave empty.', placeholder: 'https://api.linear.app' },
  ] },
  { kind: 'github', name: 'GitHub', fields: [
    { name: 'token', label: 'Token', placeholder: 'ghp_… or github_pat_…',
      hint: 'A personal access token with access to the repository’s issues (classic: repo scope; fine-grained: Issues read and write), or an app installation token.' },
    { name: 'baseUrl', label: 'Base URL (optional)', hint: 'API root, default https://api.github.com; for GitHub Enterprise Server, https://<host>/api/v3.', placeholder: 'https://api.github.com' },
  ] },
  { kind: 'jira', name: 'Jira', fields: [
    { name: 'baseUrl', label: 'Site', hint: 'Jira Cloud: https://<site>.atlassian.net; Jira Data Center or Server: the address you open Jira at.', placeholder: 'https://your-site.atlassian.net' },
    { name: 'email', label: 'Email (Jira Cloud)', hint: 'Jira Cloud: the email of your Atlassian account. Data Center or Server: leave empty.', placeholder: 'ada@example.com' },
    { name: 'token', label: 'Token',
      hint: 'Jira Cloud: an API token (id.atlassian.com → Security → API tokens). Data Center or Server: a personal access token (Profile → Personal Access Tokens).' },
  ] },
];
const accountKindName = (kind: string): string => accountKinds.find((entry) => entry.kind === kind)?.name ?? kind;

/** What the Kind menu offers: an account kind, or a Linear account that is an OAuth app installed as an agent. */
type FormKind = ConnectionKind | 'linear-agent';
const agentKind = { kind: 'linear-agent' as const, name: 'Linear as an agent (OAuth app)' };

/** "Signed in as Ada (ada@example.com, Jira Cloud)", or undefined before the account was verified. */
function signedIn(account: ConnectionView['account']): string | undefined {
  const details = [account?.email, account?.server].filter(Boolean);
  return account && `Signed in as ${account.name}${details.length ? ` (${details.join(', ')})` : ''}`;
}

export function accountsPanel(context: AppContext): { element: HTMLElement; update(): void } {
  const list = h('ul', { class: 'list account-list', 'aria-label': 'Accounts' });
  const formArea = h('div');
  const add = h('button', { type: 'button' }, 'Add account');
  const accounts = (): ConnectionView[] => context.state.snapshot?.accounts ?? [];

  // The open form is a draft (drafts.ts) until it is saved or cancelled, or its agent connects.
  let draft: Draft | undefined;
  // After Connect in the agent form: which account, when it arrives in a snapshot, is the connected app.
  let awaiting: ((account: ConnectionView) => boolean) | undefined;
  function edit(connection: ConnectionView | undefined, kind: FormKind = connection?.oauth ? 'linear-agent' : connection?.kind ?? 'linear', name = connection?.name ?? ''): void {
    awaiting = undefined;
    const handlers = {
      changeKind: (next: FormKind, typedName: string) => edit(undefined, next, typedName),
      awaitConnected: (matches: (account: ConnectionView) => boolean) => { awaiting = matches; },
      done: () => {
        awaiting = undefined;
        draft?.forget();
        replace(formArea);
        add.hidden = false;
        render();
        add.focus();
      },
    };
    const form = kind === 'linear-agent' ? agentForm(context, connection, name, handlers) : accountForm(context, connection, kind, name, handlers);
    add.hidden = true;
    draft?.forget();
    replace(formArea, form);
    draft = watchForm(form);
    form.querySelector<HTMLElement>(connection ? 'input' : 'select')?.focus();
  }
  add.addEventListener('click', () => edit(undefined));

  /** The agent account arrived (Linear sent the person back): the form gives way to its result, the draft is gone. */
  function showConnected(account: ConnectionView): void {
    awaiting = undefined;
    draft?.forget();
    draft = undefined;
    const done = h('button', { type: 'button', class: 'primary' }, 'Done');
    done.addEventListener('click', () => {
      replace(formArea);
      add.hidden = false;
      add.focus();
    });
    replace(formArea, h('div', { class: 'editor account-form account-connected', role: 'status', 'aria-label': `Account ${account.name}` },
      h('p', { class: 'test-result ok' }, `✓ “${account.name}” is connected as ${account.account?.name ?? 'the app'}.`),
      h('div', { class: 'form-actions' }, done)));
    done.focus();
  }

  list.addEventListener('click', async (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    const connection = accounts().find((candidate) => candidate.id === button?.closest<HTMLElement>('[data-id]')?.dataset.id);
    if (!button || !connection) return;
    if (button.dataset.action === 'edit') return edit(connection);
    if (!await confirmAction({ title: `Remove the account “${connection.name}”?`, body: 'Factory forgets its key.', confirm: 'Remove', danger: true })) return;
    try {
      await withBusy(button, 'Removing…', () => context.api.deleteConnection(connection.id));
      const snapshot = context.state.snapshot;
      if (snapshot) snapshot.accounts = snapshot.accounts.filter((candidate) => candidate.id !== connection.id);
      context.toast(`Account “${connection.name}” removed`);
      render();
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  });

  function render(): void {
    list.hidden = accounts().length === 0;
    replace(list, accounts().map((connection) => h('li', { class: 'account', 'data-id': connection.id },
      h('div', { class: 'account-text' },
        h('span', { class: 'item-title' }, connection.name, h('span', { class: 'tag' }, accountKindName(connection.kind))),
        h('span', { class: 'meta' }, signedIn(connection.account) ?? 'Not verified yet', connection.oauth ? ' · as an agent (OAuth app)' : '', connection.baseUrl ? ` · ${connection.baseUrl}` : ''),
        connection.problem ? h('span', { class: 'field-error', role: 'alert' }, connection.problem) : ''),
      h('div', { class: 'form-actions' },
        h('button', { type: 'button', 'data-action': 'edit' }, 'Edit'),
        h('button', { type: 'button', class: 'danger', 'data-action': 'remove' }, 'Remove')))));
  }
  render();

  return {
    element: h('section', { class: 'panel', 'aria-labelledby': 'settings-accounts' },
      h('h2', { id: 'settings-accounts' }, 'Accounts'),
      h('p', { class: 'meta' }, 'Tracker accounts your triggers read issues with. Keys stay in the engine and are never shown again.'),
      list, formArea, add),
    update() {
      render();
      const arrived = awaiting && accounts().find(awaiting);
      if (arrived) showConnected(arrived);
    },
  };
}

/**
 * The form of one account; a new one when `connection` is undefined. `done` gets the saved account
 * (nothing when cancelled). Also the trigger form's Connect dialog (connect-dialog.ts), with its kind fixed.
 */
export function accountForm(context: AppContext, connection: ConnectionView | undefined, kindName: ConnectionKind, typedName: string,
  on: { changeKind(kind: FormKind, name: string): void; done(saved?: ConnectionView): void }): HTMLFormElement {
  const spec = accountKinds.find((entry) => entry.kind === kindName) ?? accountKinds[0]!;
  const fields = new FormFields();
  const { kind, name } = kindAndName(connection, spec.kind, spec.name, typedName, on);
  const stored = connection?.hasToken === true;
  const controls = spec.fields.map((entry) => {
    const secret = entry.name === 'token';
    const input = h('input', { type: secret ? 'password' : 'text', autocomplete: secret ? 'new-password' : 'off', spellcheck: 'false', class: 'mono',
      placeholder: secret && stored ? '•••••••• stored' : entry.placeholder });
    input.value = entry.name === 'token' ? '' : connection?.[entry.name] ?? '';
    return { name: entry.name, input, element: fields.field(entry.name, entry.label, input, secret && stored ? 'A key is stored; leave empty to keep it.' : entry.hint) };
  });
  const result = h('p', { class: 'test-result', role: 'status', hidden: true });

  function input(): ConnectionInput {
    const value: ConnectionInput = { kind: spec.kind, name: name.value.trim() };
    if (connection) value.id = connection.id;
    for (const control of controls) if (control.input.value.trim()) value[control.name] = control.input.value.trim();
    return value;
  }

  const save = h('button', { type: 'submit', class: 'primary' }, connection ? 'Save' : 'Add account');
  const verify = h('button', { type: 'button' }, 'Verify');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  cancel.addEventListener('click', () => on.done());
  verify.addEventListener('click', async () => {
    fields.clear();
    result.hidden = true;
    try {
      const answer = await withBusy(verify, 'Verifying…', () => context.api.testConnection(input()));
      // A validation message goes to its fields; the service's refusal shows below the buttons.
      if (!answer.ok && fields.showError(new CallError(answer.error ?? '', answer.fields))) return;
      fields.clear();
      resultLine(result, answer.ok, answer.ok ? signedIn(answer.account) ?? 'The key works' : answer.error ?? 'The key was refused');
    } catch (error) {
      if (!fields.showError(error)) resultLine(result, false, errorText(error));
    }
  });
  const form = h('form', { class: 'editor account-form', novalidate: true, 'aria-label': connection ? `Account ${connection.name}` : 'New account' },
    h('div', { class: 'form-grid' }, fields.field('kind', 'Kind', kind), fields.field('name', 'Name', name)),
    controls.map((control) => control.element),
    fields.general,
    h('div', { class: 'form-actions' }, save, verify, cancel),
    result);
  onSubmit(form, fields, result, async () => {
    const saved = await withBusy(save, 'Verifying and saving…', () => context.api.saveConnection(input()));
    const snapshot = context.state.snapshot;
    if (snapshot) {
      const known = snapshot.accounts.some((candidate) => candidate.id === saved.id);
      snapshot.accounts = known ? snapshot.accounts.map((candidate) => (candidate.id === saved.id ? saved : candidate)) : [...snapshot.accounts, saved];
    }
    context.toast(`Account “${saved.name}” saved`);
    on.done(saved);
  });
  return form;
}

/** Runs `act` when the form is submitted, its messages cleared first; a refusal goes to its fields. */
function onSubmit(form: HTMLFormElement, fields: FormFields, result: HTMLElement, act: () => Promise<void>): void {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fields.clear();
    result.hidden = true;
    try {
      await act();
    } catch (error) {
      fields.showError(error);
    }
  });
}

/** The Kind menu (every account kind, and Linear as an agent) and the Name field, shared by both forms. */
function kindAndName(connection: ConnectionView | undefined, chosen: FormKind, kindName: string, typedName: string,
  on: { changeKind(kind: FormKind, name: string): void }): { kind: HTMLSelectElement; name: HTMLInputElement } {
  const kinds = [...accountKinds, agentKind];
  const kind = h('select', { disabled: Boolean(connection) }, kinds.map((entry) => option(entry.kind, entry.name, chosen)));
  const name = h('input', { type: 'text', required: true, autocomplete: 'off', placeholder: `${kindName} at work` });
  name.value = typedName;
  kind.addEventListener('change', () => on.changeKind(kind.value as FormKind, name.value));
  return { kind, name };
}

/**
 * The callback URL to register in the OAuth app: remote access's address when it runs; on the
 * desktop without it, the one-time loopback listener (its port changes every time).
 */
function callbackUrlHint(context: AppContext): HTMLElement {
  const remote = context.state.snapshot?.remote.url;
  if (remote) {
    const url = `${remote}/oauth/linear/callback`;
    const copy = h('button', { type: 'button', 'aria-label': 'Copy the callback URL' }, 'Copy');
    copy.addEventListener('click', async () => {
      const copied = await copyText(url);
      context.toast(copied ? 'Callback URL copied' : 'Could not copy: select the URL and copy it by hand', copied ? 'ok' : 'error');
    });
    return h('div', { class: 'input-row callback-url' }, h('code', { class: 'url', tabindex: '0' }, url), copy);
  }
  if (context.desktop) return h('code', { class: 'mono' }, 'http://127.0.0.1/oauth/linear/callback (Factory listens on a free port for each connection: register the address Linear shows as wrong, or switch on remote access for a fixed one)');
  return h('code', { class: 'mono' }, 'Switch on remote access in Settings: its address followed by /oauth/linear/callback');
}

/**
 * A Linear account installed as an agent: the OAuth app's client id and secret, then Connect sends
 * the person to Linear's authorize page; the account appears (or is renewed) once Linear sends
 * them back to Factory's callback. A stored secret is kept when the field is left empty.
 */
function agentForm(context: AppContext, connection: ConnectionView | undefined, typedName: string,
  on: { changeKind(kind: FormKind, name: string): void; awaitConnected(matches: (account: ConnectionView) => boolean): void; done(): void }): HTMLFormElement {
  const fields = new FormFields();
  const { kind, name } = kindAndName(connection, 'linear-agent', 'Linear agent', typedName, on);
  const stored = connection?.oauth?.hasClientSecret === true;
  const clientId = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', placeholder: 'from Linear → Settings → API → OAuth applications' });
  clientId.value = connection?.oauth?.clientId ?? '';
  const clientSecret = h('input', { type: 'password', autocomplete: 'new-password', spellcheck: 'false', class: 'mono', placeholder: stored ? '•••••••• stored' : '' });
  const baseUrl = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', placeholder: 'https://api.linear.app' });
  baseUrl.value = connection?.baseUrl ?? '';
  const callback = callbackUrlHint(context);
  const result = h('p', { class: 'test-result', role: 'status', hidden: true });
  const connect = h('button', { type: 'submit', class: 'primary' }, connection ? 'Reconnect' : 'Connect');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  cancel.addEventListener('click', on.done);

  function input(): ConnectionInput {
    const value: ConnectionInput = { kind: 'linear', name: name.value.trim(), oauth: { clientId: clientId.value.trim() } };
    if (connection) value.id = connection.id;
    if (clientSecret.value.trim()) value.oauth!.clientSecret = clientSecret.value.trim();
    if (baseUrl.value.trim()) value.baseUrl = baseUrl.value.trim();
    return value;
  }

  const form = h('form', { class: 'editor account-form', novalidate: true, 'aria-label': connection ? `Account ${connection.name}` : 'New Linear agent account' },
    h('div', { class: 'form-grid' }, fields.field('kind', 'Kind', kind), fields.field('name', 'Name', name)),
    h('p', { class: 'meta' }, 'Factory acts in Linear as its own app user: people delegate issues to it or mention it. Create an OAuth application in Linear (Settings → API → OAuth applications), switch on its webhooks with Agent session events, and register this callback URL:'),
    callback,
    fields.field('oauth.clientId', 'Client ID', clientId, 'Shown on the OAuth application’s page in Linear.'),
    fields.field('oauth.clientSecret', 'Client secret', clientSecret, stored ? 'A secret is stored; leave empty to keep it.' : 'Shown on the same page. It stays in Factory and is never shown again.'),
    fields.field('baseUrl', 'Base URL (optional)', baseUrl, 'API root, default https://api.linear.app; leave empty.'),
    fields.general,
    h('div', { class: 'form-actions' }, connect, cancel),
    result);
  onSubmit(form, fields, result, async () => {
    const sent = input();
    // The account as it is now (a reconnected one changes when its new token arrives), to tell Linear's answer from it.
    const before = new Map((context.state.snapshot?.accounts ?? []).map((account) => [account.id, JSON.stringify(account)]));
    const { authorizeUrl } = await withBusy(connect, 'Opening Linear…', () => context.api.connectLinearAgent(sent));
    on.awaitConnected((account) => account.hasToken && account.oauth?.clientId === sent.oauth?.clientId
      && (connection ? account.id === connection.id : account.name === sent.name)
      && before.get(account.id) !== JSON.stringify(account));
    await context.api.openExternal(authorizeUrl).catch(() => undefined);
    replace(result, 'Approve the app on Linear’s page (it works for ten minutes); the account appears here once Linear sends you back. No page opened? ',
      externalLink(context, authorizeUrl, 'Open Linear’s page'));
    result.className = 'test-result';
    result.hidden = false;
  });
  return form;
}
