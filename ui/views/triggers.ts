// The Triggers screen: the list of triggers, the editor of a generic webhook trigger, its webhook
// URL, and its ledger of recent events (the answer to "why did this not run?").
//
// View: the list, the editor form and the live parts (URL, state, ledger) are separate elements.
// `update()` re-renders the list and the live parts but never the form the user is typing in.

import type { TriggerConfig, TriggerInput, TriggerState } from '../../src/core/api';
import { errorText, type AppContext, type ScreenFactory } from '../app';
import { h, replace, timeElement } from '../dom';
import { FormFields, copyText, option, randomSecret, resultLine, switchControl, variablesEditor, withBusy } from './settings-form';

const kindNames: Record<string, string> = { webhook: 'Webhook', linear: 'Linear', jira: 'Jira', github: 'GitHub' };

export const triggersScreen: ScreenFactory = (context) => {
  /** The trigger in the editor: an id, 'new', or undefined (nothing open). */
  let selected: string | undefined;
  let editor: TriggerEditor | undefined;

  const newButton = h('button', { type: 'button', class: 'primary' }, 'New webhook trigger');
  const list = h('ul', { class: 'list trigger-list', 'aria-label': 'Triggers' });
  const listArea = h('div', { class: 'split-list' });
  const editorArea = h('div', { class: 'split-detail' });
  const element = h('section', { class: 'page triggers-page' },
    h('div', { class: 'toolbar' }, h('h1', { class: 'toolbar-title' }, 'Triggers'), h('span', { class: 'spacer' }), newButton),
    h('p', { class: 'muted intro' }, 'A trigger starts a pipeline when an event arrives: a generic webhook posts an issue to its URL.'),
    h('div', { class: 'split' }, listArea, editorArea));

  newButton.addEventListener('click', () => open('new'));
  // One listener for the whole list (event delegation).
  list.addEventListener('click', (event) => {
    const item = (event.target as HTMLElement).closest<HTMLElement>('[data-id]');
    if (item) open(item.dataset.id!);
  });

  function triggers(): TriggerConfig[] {
    return context.state.snapshot?.triggers ?? [];
  }

  function open(id: string | undefined): void {
    selected = id;
    const trigger = triggers().find((candidate) => candidate.id === id);
    editor = id === undefined ? undefined : new TriggerEditor(context, trigger, (saved) => {
      selected = saved?.id;
      open(selected);
    });
    if (editor) replace(editorArea, editor.element);
    else replace(editorArea, triggers().length ? h('div', { class: 'empty' }, 'Choose a trigger to see its URL and its recent events.') : null);
    renderList();
    editor?.focus();
  }

  function renderList(): void {
    const snapshot = context.state.snapshot;
    const all = triggers();
    if (all.length === 0) {
      const hasPipelines = (snapshot?.pipelines.length ?? 0) > 0;
      const start = h('button', { type: 'button', class: 'primary' }, 'New webhook trigger');
      start.addEventListener('click', () => open('new'));
      replace(listArea, h('div', { class: 'empty' },
        h('p', {}, 'No triggers yet. A webhook trigger starts a pipeline when a service posts to its URL.'),
        hasPipelines ? start : h('p', {}, 'Create a pipeline first: ', h('a', { href: '#/pipelines' }, 'Pipelines'))));
      return;
    }
    replace(list, all.map((trigger) => {
      const state = snapshot?.triggerStates[trigger.id];
      const pipeline = snapshot?.pipelines.find((candidate) => candidate.id === trigger.pipelineId);
      return h('li', { class: 'list-item' },
        h('button', { type: 'button', class: 'item-button', 'data-id': trigger.id, ...(trigger.id === selected ? { 'aria-current': 'true' } : {}) },
          h('span', { class: 'item-title' }, trigger.name,
            trigger.enabled ? null : h('span', { class: 'tag' }, 'off')),
          h('span', { class: 'meta item-meta' },
            `${kindNames[trigger.kind] ?? trigger.kind} → ${pipeline?.name ?? 'missing pipeline'} · `,
            'last event ', timeElement(state?.lastEventAt),
            ` · ${state?.processedCount ?? 0} processed`),
          state?.lastError ? h('span', { class: 'meta item-error' }, `✕ ${state.lastError}`) : null));
    }));
    if (list.parentNode !== listArea) replace(listArea, list);
  }

  if (triggers().length > 0) open(triggers()[0]!.id);
  else open(undefined);

  return {
    element,
    update() {
      if (selected && selected !== 'new' && !triggers().some((trigger) => trigger.id === selected)) open(triggers()[0]?.id);
      renderList();
      editor?.update();
    },
  };
};

/** The editor of one trigger (or a new one), with its live URL, state and ledger. */
class TriggerEditor {
  readonly element: HTMLElement;
  private readonly fields = new FormFields();
  private readonly name = h('input', { type: 'text', required: true, autocomplete: 'off' });
  private readonly pipeline = h('select', { required: true });
  private readonly enabled = switchControl('Enabled: accept events and start runs', true);
  private readonly secret = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false', class: 'mono' });
  private readonly secretHint = h('small', { class: 'meta' });
  private readonly variables;
  private readonly testOutput = h('div', { class: 'test-result', role: 'status', hidden: true });
  private readonly live = h('div', { class: 'trigger-live' });

  constructor(private readonly context: AppContext, private readonly trigger: TriggerConfig | undefined, private readonly saved: (trigger: TriggerConfig | undefined) => void) {
    const isNew = !trigger;
    this.name.value = trigger?.name ?? '';
    this.enabled.input.checked = trigger?.enabled ?? true;
    this.secret.value = isNew ? randomSecret() : trigger?.webhookSecret ?? '';
    this.variables = variablesEditor(trigger?.variables);
    this.fillPipelines();

    if (trigger && trigger.kind !== 'webhook') {
      const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
      remove.addEventListener('click', () => void this.remove(remove));
      this.element = h('div', { class: 'panel editor' },
        h('h2', { class: 'editor-title' }, trigger.name),
        h('p', {}, `${kindNames[trigger.kind] ?? trigger.kind} triggers are not available in this version of Factory yet. Only generic webhook triggers can be edited here.`),
        h('div', { class: 'form-actions' }, remove, this.fields.general),
        this.live);
      this.update();
      return;
    }

    const show = h('button', { type: 'button', 'aria-pressed': 'false' }, 'Show');
    const regenerate = h('button', { type: 'button' }, 'Regenerate');
    const clear = h('button', { type: 'button' }, 'Clear');
    show.addEventListener('click', () => {
      const visible = this.secret.type === 'password';
      this.secret.type = visible ? 'text' : 'password';
      show.textContent = visible ? 'Hide' : 'Show';
      show.setAttribute('aria-pressed', String(visible));
    });
    regenerate.addEventListener('click', () => {
      this.secret.value = randomSecret();
      this.secretChanged();
    });
    clear.addEventListener('click', () => {
      this.secret.value = '';
      this.secretChanged();
      this.secret.focus();
    });
    this.secret.addEventListener('input', () => this.secretChanged());
    this.secretChanged();

    const save = h('button', { type: 'submit', class: 'primary' }, isNew ? 'Create trigger' : 'Save');
    const test = h('button', { type: 'button' }, 'Test');
    test.addEventListener('click', () => void this.test(test));
    const actions = h('div', { class: 'form-actions' }, save, test);
    if (trigger) {
      const reset = h('button', { type: 'button' }, 'Reset');
      reset.title = 'Forget processed issues, so the same keys start runs again';
      reset.addEventListener('click', () => void this.reset(reset));
      const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
      remove.addEventListener('click', () => void this.remove(remove));
      actions.append(h('span', { class: 'spacer' }), reset, remove);
    } else {
      const cancel = h('button', { type: 'button' }, 'Cancel');
      cancel.addEventListener('click', () => this.saved(undefined));
      actions.append(cancel);
    }

    const form = h('form', { class: 'panel editor', novalidate: true, 'aria-label': isNew ? 'New webhook trigger' : `Trigger ${trigger!.name}` },
      h('h2', { class: 'editor-title' }, isNew ? 'New webhook trigger' : trigger!.name),
      this.fields.field('name', 'Name', this.name),
      this.fields.field('pipelineId', 'Runs pipeline', this.pipeline),
      this.enabled.element,
      this.fields.field('webhookSecret', 'Webhook secret',
        h('div', { class: 'input-row' }, this.secret, show, regenerate, clear)),
      this.secretHint,
      this.fields.group('variables', 'Variables', this.variables.element, 'Passed to the pipeline; they override its own variables.'),
      this.fields.general,
      actions,
      this.testOutput);
    this.fields.register('kind', form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.save(save);
    });
    this.element = h('div', { class: 'editor-stack' }, form, this.live);
    this.update();
  }

  focus(): void {
    if (!this.trigger) this.name.focus();
  }

  /** Re-renders what the events change: the pipeline choices, the URL, the state and the ledger. */
  update(): void {
    this.fillPipelines();
    if (!this.trigger) {
      replace(this.live, h('p', { class: 'muted' }, 'Save the trigger to get its webhook URL.'));
      return;
    }
    const snapshot = this.context.state.snapshot;
    const state = snapshot?.triggerStates[this.trigger.id];
    replace(this.live, this.trigger.kind === 'webhook' ? this.urlSection() : null, this.stateSection(state), this.ledgerSection(state));
  }

  private fillPipelines(): void {
    const pipelines = this.context.state.snapshot?.pipelines ?? [];
    const current = this.pipeline.value || this.trigger?.pipelineId || '';
    replace(this.pipeline,
      option('', pipelines.length ? 'Choose a pipeline…' : 'No pipelines yet: create one first', current),
      pipelines.map((pipeline) => option(pipeline.id, pipeline.name, current)));
  }

  private secretChanged(): void {
    this.secretHint.textContent = this.secret.value
      ? 'Each request must send it as ?token=…, the X-Factory-Token header, or Authorization: Bearer …. Saved when you save.'
      : 'No secret: anyone who can reach the URL can start runs.';
    this.secretHint.classList.toggle('warning', !this.secret.value);
  }

  private input(): TriggerInput {
    const input: TriggerInput = {
      name: this.name.value.trim(),
      kind: 'webhook',
      enabled: this.enabled.input.checked,
      pipelineId: this.pipeline.value,
      webhookSecret: this.secret.value.trim(),
      variables: this.variables.read(),
    };
    if (this.trigger) input.id = this.trigger.id;
    return input;
  }

  private async save(button: HTMLButtonElement): Promise<void> {
    this.fields.clear();
    try {
      const saved = await withBusy(button, 'Saving…', () => this.context.api.saveTrigger(this.input()));
      this.context.toast(`Trigger “${saved.name}” saved`);
      // The snapshot event follows; put the saved trigger in now so the editor can open it.
      const snapshot = this.context.state.snapshot;
      if (snapshot && !snapshot.triggers.some((trigger) => trigger.id === saved.id)) snapshot.triggers.push(saved);
      else if (snapshot) snapshot.triggers = snapshot.triggers.map((trigger) => (trigger.id === saved.id ? saved : trigger));
      this.saved(saved);
    } catch (error) {
      this.fields.showError(error);
    }
  }

  private async test(button: HTMLButtonElement): Promise<void> {
    this.fields.clear();
    this.testOutput.hidden = true;
    try {
      const result = await withBusy(button, 'Testing…', () => this.context.api.testTrigger(this.input()));
      if (!result.ok) {
        resultLine(this.testOutput, false, result.error ?? 'The test failed');
        return;
      }
      resultLine(this.testOutput, true, result.issues.length ? `Valid. It would start runs for: ${result.issues.map((issue) => issue.title).join(', ')}` : 'Valid: the trigger accepts events as configured.');
    } catch (error) {
      if (!this.fields.showError(error)) resultLine(this.testOutput, false, errorText(error));
    }
  }

  private async reset(button: HTMLButtonElement): Promise<void> {
    const trigger = this.trigger!;
    if (!confirm(`Reset “${trigger.name}”? It forgets which issues it has processed, so the same keys start runs again.`)) return;
    try {
      await withBusy(button, 'Resetting…', () => this.context.api.resetTrigger(trigger.id));
      this.context.toast(`Trigger “${trigger.name}” reset`);
    } catch (error) {
      this.context.toast(errorText(error), 'error');
    }
  }

  private async remove(button: HTMLButtonElement): Promise<void> {
    const trigger = this.trigger!;
    if (!confirm(`Delete the trigger “${trigger.name}”? Its URL stops working and its history is deleted.`)) return;
    try {
      await withBusy(button, 'Deleting…', () => this.context.api.deleteTrigger(trigger.id));
      this.context.toast(`Trigger “${trigger.name}” deleted`);
      const snapshot = this.context.state.snapshot;
      if (snapshot) snapshot.triggers = snapshot.triggers.filter((candidate) => candidate.id !== trigger.id);
      this.saved(undefined);
    } catch (error) {
      this.context.toast(errorText(error), 'error');
    }
  }

  private urlSection(): HTMLElement {
    const snapshot = this.context.state.snapshot;
    const base = snapshot?.webhookUrl;
    if (!base) {
      return h('div', { class: 'panel' },
        h('h3', {}, 'Webhook URL'),
        h('p', {}, 'The webhook server is off, so nothing can reach this trigger. ', h('a', { href: '#/settings' }, 'Switch on the webhook server in Settings'), '.'),
        snapshot?.webhookError ? h('p', { class: 'field-error' }, `✕ ${snapshot.webhookError}`) : null);
    }
    const url = `${base.replace(/\/+$/, '')}/hooks/${this.trigger!.id}`;
    const copy = h('button', { type: 'button' }, 'Copy');
    copy.addEventListener('click', async () => {
      const copied = await copyText(url);
      this.context.toast(copied ? 'Webhook URL copied' : 'Could not copy: select the URL and copy it by hand', copied ? 'ok' : 'error');
    });
    return h('div', { class: 'panel' },
      h('h3', {}, 'Webhook URL'),
      h('div', { class: 'input-row' }, h('code', { class: 'url', tabindex: '0' }, url), copy),
      h('p', { class: 'meta' }, 'POST a JSON body with at least a title: {"title": "…", "key": "…", "description": "…"}. The same key never starts two runs.'));
  }

  private stateSection(state: TriggerState | undefined): HTMLElement {
    return h('p', { class: 'meta trigger-state' },
      'Last event ', timeElement(state?.lastEventAt), ` · ${state?.processedCount ?? 0} processed`,
      state?.lastError ? h('span', { class: 'item-error' }, ` · ✕ ${state.lastError}`) : null);
  }

  private ledgerSection(state: TriggerState | undefined): HTMLElement {
    const entries = state?.ledger ?? [];
    const heading = h('h3', {}, 'Recent events');
    if (entries.length === 0) {
      return h('div', { class: 'ledger' }, heading, h('div', { class: 'empty' }, 'No events yet. Send a request to the webhook URL: each one shows here with what was decided.'));
    }
    return h('div', { class: 'ledger' }, heading,
      h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Recent events' },
        h('table', { class: 'table' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Source'), h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Decision'), h('th', { scope: 'col' }, 'Run'))),
          h('tbody', {}, entries.map((entry) => h('tr', {},
            h('td', {}, timeElement(entry.at)),
            h('td', {}, entry.source),
            h('td', { class: 'mono' }, entry.key ?? '—'),
            h('td', { class: entry.decision.startsWith('started') ? 'decision decision-started' : 'decision' }, entry.decision),
            h('td', {}, entry.runId ? h('a', { href: `#/runs/${encodeURIComponent(entry.runId)}` }, 'Open run') : '—')))))));
  }
}
