// A trigger's webhook URL and its secret in words (trigger-editor.ts): the URL as it works (with
// ?token= when the secret is Factory's own, masked until Show), Copy, Copy as curl and Send test
// event for a generic webhook, what a Jira webhook event is checked against, and what the secret
// set or missing means.

import type { TriggerConfig, TriggerKind, TriggerState } from '../../src/core/api';
import { errorText, type AppContext } from '../app';
import { h } from '../dom';
import { copyText, withBusy } from './settings-form';
import { kindNames, type ProviderForm } from './trigger-kinds';

/** What the URL part needs of a saved trigger's editor. */
export interface WebhookUrlSource {
  context: AppContext;
  trigger: TriggerConfig;
  kind: TriggerKind;
  provider: ProviderForm | undefined;
  /** The secret is Factory's own: the URL carries it as ?token=. */
  tokenInUrl: boolean;
  /** The secret field hides what it holds (Show not pressed): the URL's token is masked too. */
  secretHidden: boolean;
}

/** What the secret in the form means: checked how, or (none) what is open. */
export function secretWords(secret: string, kind: TriggerKind, provider: ProviderForm | undefined): string {
  return secret
    ? provider?.secretHint ?? 'Each request must send it as ?token=…, the X-Factory-Token header, or Authorization: Bearer …. Saved when you save.'
    : provider?.followUps
      ? 'No secret: every delivery is refused, since a review starts work that gets pushed. Set the secret GitHub signs its deliveries with; polling needs none.'
      : provider
      ? `No secret: events are not verified, so each one costs a request to ${kindNames[kind]} for the issue it names. ${provider.tokenInUrl ? 'Regenerate one' : `Set the secret ${kindNames[kind]} signs its deliveries with`}; polling needs none.`
      : 'No secret: anyone who can reach the URL can start runs.';
}

/** What a Jira trigger checks of a webhook event against its query (the engine reads the projects from the saved query). */
function webhookCheck(kind: TriggerKind, state: TriggerState | undefined): HTMLElement | null {
  if (kind !== 'jira') return null;
  const projects = state?.webhookProjects;
  return h('p', { class: 'meta', 'data-test': 'webhook-check' }, projects
    ? `Webhook events are checked for project ${projects.join(', ')} (and the labels above); the rest of the query is checked only when polls read issues.`
    : 'Webhook events are not checked against this query, since it names no project plainly (project = ABC, joined to the rest by AND): events of any project start runs (the labels above are checked). Narrow the webhook in Jira with its own JQL.');
}

/** The webhook URL of a saved trigger, or why nothing can reach it. */
export function urlSection(editor: WebhookUrlSource, state: TriggerState | undefined): HTMLElement {
  const snapshot = editor.context.state.snapshot;
  const base = snapshot?.webhookUrl;
  if (!base) {
    return h('div', { class: 'panel' },
      h('h3', {}, 'Webhook URL'),
      h('p', {}, editor.provider ? `The webhook server is off: ${kindNames[editor.kind]} cannot send issues here, so they arrive only by polling. ` : 'The webhook server is off, so nothing can reach this trigger. ',
        h('a', { href: '#/settings' }, 'Switch on the webhook server in Settings'), '.'),
      snapshot?.webhookError ? h('p', { class: 'field-error' }, `✕ ${snapshot.webhookError}`) : null);
  }
  const url = `${base.replace(/\/+$/, '')}/hooks/${editor.trigger.id}`;
  // The saved secret, not the one being typed: the URL works as it is shown.
  const token = editor.tokenInUrl && editor.trigger.webhookSecret ? `?token=${encodeURIComponent(editor.trigger.webhookSecret)}` : '';
  const shown = token && editor.secretHidden ? `${url}?token=•••` : url + token;
  const copyButton = (label: string, what: string, text: string) => h('button', { type: 'button', onclick: async () => {
    const copied = await copyText(text);
    editor.context.toast(copied ? `${what} copied` : `Could not copy: ${token ? 'show the secret, then ' : ''}select the URL and copy it by hand`, copied ? 'ok' : 'error');
  } }, label);
  const generic = editor.kind === 'webhook';
  const curl = `curl -X POST '${url + token}' -H 'Content-Type: application/json' -d '{"title": "Login fails on Safari", "key": "WEB-12", "description": "Steps to reproduce: …"}'`;
  const test = h('button', { type: 'button', 'data-test': 'send-test-event', onclick: () => void sendTestEvent(editor, test) }, 'Send test event');
  return h('div', { class: 'panel' },
    h('h3', {}, 'Webhook URL'),
    h('div', { class: 'input-row' }, h('code', { class: 'url', tabindex: '0' }, shown), copyButton('Copy', 'Webhook URL', url + token)),
    generic ? h('div', { class: 'form-actions' }, copyButton('Copy as curl', 'curl command', curl), test) : null,
    h('p', { class: 'meta' }, editor.provider?.urlHint ?? 'POST a JSON body with at least a title: {"title": "…", "key": "…", "description": "…"}. The same key never starts two runs. Send test event posts one through the webhook server, as a sender would.'),
    webhookCheck(editor.kind, state));
}

async function sendTestEvent(editor: WebhookUrlSource, button: HTMLButtonElement): Promise<void> {
  try {
    const result = await withBusy(button, 'Sending…', () => editor.context.api.sendTestEvent(editor.trigger.id));
    if (result.ok) editor.context.toast('Test event accepted: a run started (see Recent events)');
    else editor.context.toast(`The webhook server answered ${result.status ? `HTTP ${result.status}: ` : ''}${result.error ?? 'an error'}`, 'error');
  } catch (error) {
    editor.context.toast(errorText(error), 'error');
  }
}
