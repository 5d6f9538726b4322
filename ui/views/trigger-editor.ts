// The editor of one trigger (or a new one), beside the Triggers list (triggers.ts): its settings
// form (name, pipeline, runner and which runner its runs use, secret, variables; the tracker part
// in trigger-tracker-fields.ts), Save, Test or Preview, Poll now, Reset and Delete, and its live
// parts kept current by `update()`: what it has done (trigger-activity.ts) and its webhook URL
// (trigger-webhook-url.ts). `update()` never re-renders the form the user is typing in.

import type { TriggerConfig, TriggerInput, TriggerKind } from '../../src/core/api';
import { errorText, type AppContext } from '../app';
import { CallError } from '../call-error';
import { h, replace } from '../dom';
import { confirmAction } from './dialog';
import { deleteWithUndo } from './pending-deletions';
import { FormFields, option, randomSecret, resultLine, switchControl, variablesEditor, withBusy } from './settings-form';
import { issuePreviewItem } from './issue-preview';
import { plainRunnerName, runnerChoices, runnerOfTrigger, triggerRunnerLine, type RunnerSources } from './runner-words';
import { editableKinds, kindList, kindNames, providerForms, type ProviderForm } from './trigger-kinds';
import { TrackerFields } from './trigger-tracker-fields';
import { ledgerSection, stateSection } from './trigger-activity';
import { secretWords, urlSection, type WebhookUrlSource } from './trigger-webhook-url';

/** The editor of one trigger (or a new one), with its live URL, state and ledger. */
export class TriggerEditor {
  readonly element: HTMLElement;
  private readonly kind: TriggerKind;
  /** The tracker part of the form; undefined for a generic webhook. */
  private readonly provider: ProviderForm | undefined;
  /** The secret is Factory's own (a generic webhook, Jira): the URL carries it as ?token=, copied whole, shown only with Show. */
  private readonly tokenInUrl: boolean;
  private readonly fields = new FormFields();
  private readonly name = h('input', { type: 'text', required: true, autocomplete: 'off' });
  private readonly pipeline = h('select', { required: true });
  private readonly runner = h('select', { 'data-test': 'trigger-runner' });
  /** Which runner its runs use and why (runner-words.ts), kept current as the form changes. */
  private readonly runnerLine = h('span', { 'data-test': 'trigger-runner-line' });
  private readonly enabled = switchControl('Enabled: accept events and start runs', true);
  private readonly secret = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false', class: 'mono' });
  private readonly secretHint = h('small', { class: 'meta' });
  private readonly variables;
  private readonly testOutput = h('div', { class: 'test-result', role: 'status', hidden: true });
  private readonly live = h('div', { class: 'trigger-live' });
  /** The account, filter and write-back fields of a tracker trigger; undefined for a generic webhook. */
  private readonly tracker: TrackerFields | undefined;

  constructor(private readonly context: AppContext, private readonly trigger: TriggerConfig | undefined, draft: { kind: TriggerKind; name: string },
    private readonly on: { saved(trigger: TriggerConfig | undefined): void; changeKind(kind: TriggerKind, name: string): void }) {
    const isNew = !trigger;
    this.kind = trigger?.kind ?? draft.kind;
    this.provider = providerForms[this.kind];
    this.tracker = this.provider && new TrackerFields(context, trigger, this.kind, this.provider, this.fields);
    this.name.value = trigger?.name ?? draft.name;
    this.enabled.input.checked = trigger?.enabled ?? true;
    const ownSecret = (this.tokenInUrl = !this.provider || this.provider.tokenInUrl === true);
    this.secret.value = isNew && ownSecret ? randomSecret() : trigger?.webhookSecret ?? '';
    this.variables = variablesEditor(trigger?.variables);
    this.fillPipelines();

    if (trigger && !this.provider && trigger.kind !== 'webhook') {
      const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
      remove.addEventListener('click', () => this.remove());
      this.element = h('div', { class: 'panel editor' },
        h('h2', { class: 'editor-title' }, trigger.name),
        h('p', {}, `${kindNames[trigger.kind] ?? trigger.kind} triggers are not available in this version of Factory yet. ${kindList(editableKinds, 'conjunction')} triggers can be edited here.`),
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
      if (this.tokenInUrl) this.update(); // the URL shows its token while the secret shows
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
    this.runner.addEventListener('change', () => this.showRunnerLine());
    this.pipeline.addEventListener('change', () => this.showRunnerLine());
    this.secretChanged();

    const save = h('button', { type: 'submit', class: 'primary' }, isNew ? 'Create trigger' : 'Save');
    const test = h('button', { type: 'button' }, this.provider ? 'Preview' : 'Test');
    test.addEventListener('click', () => void this.test(test));
    const actions = h('div', { class: 'form-actions' }, save, test);
    if (trigger && this.provider) {
      const poll = h('button', { type: 'button' }, 'Poll now');
      poll.addEventListener('click', () => void this.poll(poll));
      actions.append(poll);
    }
    if (trigger) {
      const reset = h('button', { type: 'button' }, 'Reset');
      reset.title = 'Forget processed issues, so the same keys start runs again';
      reset.addEventListener('click', () => void this.reset(reset));
      const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
      remove.addEventListener('click', () => this.remove());
      actions.append(h('span', { class: 'spacer' }), reset, remove);
    } else {
      const cancel = h('button', { type: 'button' }, 'Cancel');
      cancel.addEventListener('click', () => this.on.saved(undefined));
      actions.append(cancel);
    }

    const title = isNew ? `New ${this.provider ? kindNames[this.kind] : 'webhook'} trigger` : trigger!.name;
    const kind = h('select', {}, editableKinds.map((candidate) => option(candidate, kindNames[candidate]!, this.kind)));
    kind.addEventListener('change', () => this.on.changeKind(kind.value as TriggerKind, this.name.value));
    const form = h('form', { class: 'panel editor', novalidate: true, 'aria-label': isNew ? title : `Trigger ${trigger!.name}` },
      isNew ? h('h2', { class: 'editor-title' }, title) : h('h3', {}, 'Settings'),
      isNew ? this.fields.field('kind', 'Kind', kind) : null,
      this.fields.field('name', 'Name', this.name),
      this.fields.field('pipelineId', 'Runs pipeline', this.pipeline),
      this.fields.field('runnerId', 'Runner', this.runner),
      h('p', { class: 'meta runner-line', role: 'status' }, this.runnerLine, ' ', h('a', { href: '#/settings?section=runners' }, 'Settings → Runners')),
      this.enabled.element,
      this.tracker?.elements() ?? null,
      this.kind === 'linear' ? this.tracker?.agentGroup() : null,
      this.fields.field('webhookSecret', 'Webhook secret',
        h('div', { class: 'input-row' }, this.secret, show, ownSecret ? regenerate : null, clear)),
      this.secretHint,
      this.provider?.marks ? this.tracker?.writeBackGroup(this.provider.marks) : null,
      this.fields.group('variables', 'Variables', this.variables.element, 'Passed to the pipeline; they override its own variables.'),
      this.fields.general,
      actions,
      this.testOutput);
    if (!isNew) this.fields.register('kind', form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.save(save);
    });
    this.element = isNew ? h('div', { class: 'editor-stack' }, form, this.live)
      : h('div', { class: 'editor-stack' }, h('h2', { class: 'editor-title' }, title), this.live, form);
    // Escape closes the form, as Cancel does (a dialog above it takes its own Escape).
    this.element.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !event.defaultPrevented) this.on.saved(undefined);
    });
    this.update();
  }


  focus(): void {
    if (!this.trigger) this.name.focus();
  }

  /** Re-renders what the events change: the pipeline and account choices, the URL, the state and the ledger. */
  update(): void {
    this.fillPipelines();
    this.tracker?.fillConnections();
    if (!this.trigger) {
      replace(this.live, h('p', { class: 'muted' }, 'Save the trigger to get its webhook URL.'));
      return;
    }
    const snapshot = this.context.state.snapshot;
    const state = snapshot?.triggerStates[this.trigger.id];
    // The events first: what happened is what a saved trigger is opened for (its settings follow).
    const polls = Boolean(this.provider);
    replace(this.live, stateSection(polls, state), ledgerSection(this.context, polls, state), this.trigger.kind === 'webhook' || this.provider ? urlSection(this.urlSource(this.trigger), state) : null);
  }

  /** What the URL part shows of this saved trigger. */
  private urlSource(trigger: TriggerConfig): WebhookUrlSource {
    return { context: this.context, trigger, kind: this.kind, provider: this.provider, tokenInUrl: this.tokenInUrl, secretHidden: this.secret.type === 'password' };
  }

  private fillPipelines(): void {
    const pipelines = this.context.state.snapshot?.pipelines ?? [];
    const current = this.pipeline.value || this.trigger?.pipelineId || '';
    replace(this.pipeline,
      option('', pipelines.length ? 'Choose a pipeline…' : 'No pipelines yet: create one first', current),
      pipelines.map((pipeline) => option(pipeline.id, pipeline.name, current)));
    this.fillRunners();
  }

  /** The runner menu (the default first, named by what it resolves to), keeping what is chosen. */
  private fillRunners(): void {
    const runners = this.context.state.snapshot?.runners ?? [];
    const current = this.runner.options.length ? this.runner.value : this.trigger?.runnerId ?? '';
    replace(this.runner, runnerChoices(runners, '').map(([value, label]) => option(value, label, current)));
    this.showRunnerLine();
  }

  /** What the form says now, for the runner rule: its kind, secret, runner, and its pipeline's and project's runners. */
  private runnerSources(): RunnerSources {
    const snapshot = this.context.state.snapshot;
    const pipeline = snapshot?.pipelines.find((candidate) => candidate.id === this.pipeline.value);
    return {
      trigger: { kind: this.kind, webhookSecret: this.secret.value, runnerId: this.runner.value || undefined },
      pipeline, project: snapshot?.projects.find((candidate) => candidate.id === pipeline?.projectId), runners: snapshot?.runners ?? [],
    };
  }

  private showRunnerLine(): void {
    const sources = this.runnerSources();
    const fallback = runnerOfTrigger({ ...sources, trigger: { ...sources.trigger, runnerId: undefined } });
    if (this.runner.options[0]) this.runner.options[0].textContent = `Default: ${plainRunnerName(sources.runners, fallback.runnerId)}`;
    this.runnerLine.textContent = `${triggerRunnerLine(sources)}.`;
  }

  private secretChanged(): void {
    this.secretHint.textContent = secretWords(this.secret.value, this.kind, this.provider);
    this.secretHint.classList.toggle('warning', !this.secret.value);
    this.showRunnerLine();
  }

  private input(): TriggerInput {
    const input: TriggerInput = {
      name: this.name.value.trim(),
      kind: this.kind,
      enabled: this.enabled.input.checked,
      pipelineId: this.pipeline.value,
      webhookSecret: this.secret.value.trim(),
      variables: this.variables.read(),
    };
    if (this.trigger) input.id = this.trigger.id;
    if (this.runner.value) input.runnerId = this.runner.value;
    if (!this.tracker) return input;
    if (!input.webhookSecret) delete input.webhookSecret;
    this.tracker.read(input);
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
      this.on.saved(saved);
    } catch (error) {
      this.fields.showError(error);
    }
  }

  private async test(button: HTMLButtonElement): Promise<void> {
    this.fields.clear();
    this.testOutput.hidden = true;
    try {
      const result = await withBusy(button, this.provider ? 'Loading issues…' : 'Testing…', () => this.context.api.testTrigger(this.input()));
      if (!result.ok) {
        // A validation message goes to its fields; anything else (a refused key, no such team) below.
        if (this.fields.showError(new CallError(result.error ?? '', result.fields))) return;
        this.fields.clear();
        resultLine(this.testOutput, false, result.error ?? 'The test failed');
        return;
      }
      const count = result.issues.length;
      if (!this.provider) {
        resultLine(this.testOutput, true, count ? `Valid. It would start runs for: ${result.issues.map((issue) => issue.title).join(', ')}` : 'Valid: the trigger accepts events as configured.');
        return;
      }
      resultLine(this.testOutput, true, count ? `${count} ${count === 1 ? 'issue matches' : 'issues match'} the filter now:` : 'No issue matches the filter now.');
      this.testOutput.append(h('ul', { class: 'preview-list', 'aria-label': 'Matching issues' }, result.issues.map((issue) => issuePreviewItem(this.context, issue))));
    } catch (error) {
      if (!this.fields.showError(error)) resultLine(this.testOutput, false, errorText(error));
    }
  }

  private async poll(button: HTMLButtonElement): Promise<void> {
    const trigger = this.trigger!;
    try {
      const state = await withBusy(button, 'Polling…', () => this.context.api.pollTrigger(trigger.id));
      // The snapshot event follows; show the new state now.
      const snapshot = this.context.state.snapshot;
      if (snapshot) snapshot.triggerStates[trigger.id] = state;
      this.update();
      if (state.lastError) this.context.toast(state.lastError, 'error');
      else this.context.toast(`Trigger “${trigger.name}” polled: ${state.processedCount} processed`);
    } catch (error) {
      this.context.toast(errorText(error), 'error');
    }
  }

  private async reset(button: HTMLButtonElement): Promise<void> {
    const trigger = this.trigger!;
    if (!await confirmAction({ title: `Reset “${trigger.name}”?`, body: 'It forgets which issues it has processed, so the same keys start runs again.', confirm: 'Reset' })) return;
    try {
      await withBusy(button, 'Resetting…', () => this.context.api.resetTrigger(trigger.id));
      this.context.toast(`Trigger “${trigger.name}” reset`);
    } catch (error) {
      this.context.toast(errorText(error), 'error');
    }
  }

  /** Undoable for a few seconds (pending-deletions.ts): its URL works until the toast ends. */
  private remove(): void {
    const trigger = this.trigger!;
    deleteWithUndo(this.context, [trigger.id], `Trigger “${trigger.name}” deleted`, () => this.context.api.deleteTrigger(trigger.id), () => {
      const snapshot = this.context.state.snapshot;
      if (snapshot) snapshot.triggers = snapshot.triggers.filter((candidate) => candidate.id !== trigger.id);
    });
    this.on.saved(undefined);
  }
}
