// The Triggers screen: the list of triggers, the editor of a generic webhook trigger or of a
// tracker trigger (Linear, GitHub, Jira), its webhook URL, its polling state, and its ledger of
// recent events (the answer to "why did this not run?"). A generic webhook trigger offers its URL
// with its token, as curl, and a test event sent through the webhook server (sendTestEvent).
//
// View: the list, the editor form and the live parts (URL, state, ledger) are separate elements.
// `update()` re-renders the list and the live parts but never the form the user is typing in.

import type { ConnectionKind, TriggerConfig, TriggerFilter, TriggerInput, TriggerKind, TriggerState, WriteBackMarks } from '../../src/core/api';
import { errorText, type AppContext, type ScreenFactory } from '../app';
import { CallError } from '../call-error';
import { h, replace, timeElement } from '../dom';
import { connectButton } from './connect-dialog';
import { confirmAction } from './dialog';
import { errorElement, errorWords } from './error-details';
import { DraftShelf, watchForm, type Draft } from './drafts';
import { deleteWithUndo, isPendingDeletion } from './pending-deletions';
import { checkbox } from './form';
import { eventTable } from './trigger-events';
import { FormFields, copyText, option, randomSecret, resultLine, switchControl, variablesEditor, withBusy } from './settings-form';
import { issuePreviewItem } from './issue-preview';
import { listSearch } from './search-box';
import { plainRunnerName, runnerChoices, runnerOfTrigger, triggerRunnerLine, type RunnerSources } from './runner-words';

const kindNames: Record<string, string> = { webhook: 'Webhook', linear: 'Linear', jira: 'Jira', github: 'GitHub', 'github-review': 'GitHub reviews' };

interface FilterField {
  name: keyof TriggerFilter;
  label: string;
  hint: string;
  placeholder?: string;
  /** Comma-separated in the form, a list in the filter. */
  list?: boolean;
  /** A monospace textarea across the form (a query) instead of a one-line input. */
  multiline?: boolean;
}

/** What the editor asks of a trigger that reads a tracker's issues through an account. */
interface ProviderForm {
  filter: FilterField[];
  /** What write-back sets when a run starts and ends: issue states (Linear, Jira) or labels (GitHub); absent: no write-back (GitHub reviews). */
  marks?: { name: 'states' | 'labels'; noun: string; hint: string };
  /** The account's service when it is not the kind itself (GitHub reviews use a GitHub account). */
  accountKind?: string;
  /** Follow-up runs per pull request (GitHub reviews): the maxFollowUps field. */
  followUps?: boolean;
  /** Under a webhook secret that is set. */
  secretHint: string;
  urlHint: string;
  /**
   * The secret is Factory's own, not the tracker's: prefilled at random (with Regenerate), and the
   * webhook URL carries it as ?token=, which is how the tracker proves itself (Jira).
   */
  tokenInUrl?: boolean;
}

const labelsFilter: FilterField = { name: 'labels', label: 'Labels', list: true, hint: 'Comma-separated: an issue with any of them. Empty: any labels.', placeholder: 'factory' };

/** The tracker kinds the editor offers. */
const providerForms: Partial<Record<TriggerKind, ProviderForm>> = {
  linear: {
    filter: [
      { name: 'team', label: 'Team key', hint: 'The prefix of the team’s issue keys.', placeholder: 'ENG' },
      { name: 'states', label: 'States', list: true, placeholder: 'unstarted, started',
        hint: 'Comma-separated state types (triage, backlog, unstarted, started, completed, canceled) or state names. Empty: every state except completed, canceled and duplicate.' },
      labelsFilter,
      { name: 'assignee', label: 'Assignee', hint: '“me”, an email, “none” (unassigned), or empty for anyone.', placeholder: 'me' },
    ],
    marks: { name: 'states', noun: 'State', hint: 'The workflow state a run moves its issue to when it starts, succeeds and fails, such as In Progress. Empty: left alone.' },
    secretHint: 'Linear’s signing secret: a delivery without its signature is refused. Saved when you save.',
    urlHint: 'In Linear, Settings → API → Webhooks: paste this URL, choose Issue events, and copy Linear’s signing secret into the Webhook secret field above.',
  },
  github: {
    filter: [
      { name: 'repo', label: 'Repository', hint: 'owner/name; checked when you save.', placeholder: 'octo-org/website' },
      labelsFilter,
      { name: 'assignee', label: 'Assignee', hint: '“me” (the account’s login), a login, “none” (unassigned), or empty for anyone.', placeholder: 'me' },
    ],
    marks: { name: 'labels', noun: 'Label', hint: 'The label a run puts on its issue when it starts, succeeds and fails; the previous one is removed when the next is set. Empty: labels left alone.' },
    secretHint: 'GitHub signs each delivery with this secret (X-Hub-Signature-256): a delivery without a valid signature is refused. Saved when you save.',
    urlHint: 'In the repository, Settings → Webhooks → Add webhook: paste this URL, content type application/json, choose “Issues” events (and optionally “Issue comments”), and enter the secret above in GitHub’s Secret field.',
  },
  'github-review': {
    filter: [{ name: 'repo', label: 'Repository', hint: 'owner/name: the pull requests Factory opened there are watched; checked when you save.', placeholder: 'octo-org/website' }],
    accountKind: 'github',
    followUps: true,
    secretHint: 'GitHub signs each delivery with this secret (X-Hub-Signature-256): a delivery without a valid signature is refused. Saved when you save.',
    urlHint: 'In the repository, Settings → Webhooks → Add webhook: paste this URL, content type application/json, choose “Pull requests”, “Pull request reviews”, “Pull request review comments” and “Issue comments”, and enter the secret above in GitHub’s Secret field. A review by someone with write access starts a follow-up run on the pull request’s branch; so does a comment beginning with /factory.',
  },
  jira: {
    filter: [
      { name: 'query', label: 'Query', multiline: true, placeholder: 'project = ABC AND labels = agent AND statusCategory != Done',
        hint: 'JQL: the issues that start runs. Checked at Jira when you preview and save, and by every poll. Webhook events are checked only for the projects it names plainly (project = ABC, or project in (ABC, DEF), joined to the rest by AND); the rest of the query is not checked for them.' },
      { ...labelsFilter, hint: 'Comma-separated: an issue with any of them. Checked on webhook events too, since Jira’s webhooks are not checked against the query. Empty: any labels.' },
    ],
    marks: { name: 'states', noun: 'Transition', hint: 'A transition or status name, such as In Progress or Done: where a run moves its issue when it starts, succeeds and fails. Empty: left alone.' },
    secretHint: 'Jira proves itself with this secret: the webhook URL carries it as its token, so a delivery without it is refused. Jira admin webhooks can also sign with it (X-Hub-Signature). Saved when you save.',
    urlHint: 'In Jira, Settings → System → WebHooks (or a project automation “Send web request”): paste this URL, choose Issue created and Issue updated events; you may narrow it with JQL there. Jira admin webhooks can also sign with a secret (X-Hub-Signature): use the same secret.',
    tokenInUrl: true,
  },
};
const editableKinds = ['webhook', ...Object.keys(providerForms)] as TriggerKind[];
const markWords: Record<keyof WriteBackMarks, string> = { started: 'at start', succeeded: 'on success', failed: 'on failure' };
/** "Linear, GitHub, or Jira": the names of `kinds` as a list in words. */
const kindList = (kinds: string[], type: 'conjunction' | 'disjunction'): string =>
  new Intl.ListFormat('en', { type }).format(kinds.map((kind) => kindNames[kind] ?? kind));

export const triggersScreen: ScreenFactory = (context) => {
  /** The trigger in the editor: an id, 'new', or undefined (nothing open). */
  let selected: string | undefined;
  let editor: TriggerEditor | undefined;
  let draft: Draft | undefined;
  /** Editors left with unsaved changes, per trigger ('new': the one being made), shown again when opened (drafts.ts). */
  const shelf = new DraftShelf<TriggerEditor>();

  const newButton = h('button', { type: 'button', class: 'primary' }, 'New trigger');
  const list = h('ul', { class: 'list trigger-list', 'aria-label': 'Triggers' });
  const listArea = h('div', { class: 'split-list' });
  const editorArea = h('div', { class: 'split-detail' });
  const element = h('section', { class: 'page triggers-page' },
    h('div', { class: 'toolbar' }, h('h1', { class: 'toolbar-title' }, 'Triggers'),
      listSearch({ scope: list, items: 'li', noun: 'triggers', placeholder: 'Search name, kind, pipeline' }), h('span', { class: 'spacer' }), newButton),
    h('p', { class: 'muted intro' }, `A trigger starts a pipeline when an issue arrives: a generic webhook posts one to its URL; a ${kindList(Object.keys(providerForms), 'disjunction')} trigger polls the tracker’s issues and takes its webhooks.`),
    h('div', { class: 'split' }, listArea, editorArea));

  newButton.addEventListener('click', () => open('new', 'webhook', '', true));
  // One listener for the whole list (event delegation).
  list.addEventListener('click', (event) => {
    const item = (event.target as HTMLElement).closest<HTMLElement>('[data-id]');
    if (item) open(item.dataset.id!, 'webhook', '', true);
  });

  function triggers(): TriggerConfig[] {
    return (context.state.snapshot?.triggers ?? []).filter((trigger) => !isPendingDeletion(trigger.id));
  }

  /**
   * Opens a trigger, a new one ('new', of `kind`, with the name typed so far), or nothing. `keep`
   * (the person switched): the editor left keeps its draft, and a draft kept for `id` comes back.
   */
  function open(id: string | undefined, kind: TriggerKind = 'webhook', name = '', keep = false): void {
    if (keep && editor && draft && selected !== undefined) shelf.put(selected, editor, draft);
    else draft?.forget();
    selected = id;
    const trigger = triggers().find((candidate) => candidate.id === id);
    const kept = keep && id !== undefined ? shelf.take(id) : undefined;
    editor = kept?.editor ?? (id === undefined ? undefined : new TriggerEditor(context, trigger, { kind, name }, {
      saved: (saved) => open(saved?.id),
      changeKind: (next, typed) => open('new', next, typed),
    }));
    draft = kept?.draft ?? (editor ? watchForm(editor.element) : undefined);
    if (kept) {
      editor!.update();
      kept.draft.showKept(() => open(id));
    }
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
      const start = h('button', { type: 'button', class: 'primary' }, 'New trigger');
      start.addEventListener('click', () => open('new'));
      replace(listArea, h('div', { class: 'empty' },
        h('p', {}, 'No triggers yet. A trigger starts a pipeline when a service posts to its URL or a tracker has a matching issue.'),
        hasPipelines ? start : h('p', {}, 'Create a pipeline first: ', h('a', { href: '#/pipelines' }, 'Pipelines'))));
      return;
    }
    replace(list, all.map((trigger) => {
      const state = snapshot?.triggerStates[trigger.id];
      const pipeline = snapshot?.pipelines.find((candidate) => candidate.id === trigger.pipelineId);
      const polls = trigger.kind !== 'webhook';
      return h('li', { class: 'list-item' },
        h('button', { type: 'button', class: 'item-button', 'data-id': trigger.id, ...(trigger.id === selected ? { 'aria-current': 'true' } : {}) },
          h('span', { class: 'item-title' }, trigger.name,
            trigger.enabled ? null : h('span', { class: 'tag' }, 'off'),
            shelf.has(trigger.id) ? h('span', { class: 'tag tag-draft' }, 'unsaved') : null),
          h('span', { class: 'meta item-meta' },
            `${kindNames[trigger.kind] ?? trigger.kind} → ${pipeline?.name ?? 'missing pipeline'} · `,
            polls ? 'last poll ' : 'last event ', timeElement(polls ? state?.lastPollAt : state?.lastEventAt),
            ` · ${state?.processedCount ?? 0} processed`),
          state?.lastError ? h('span', { class: 'meta item-error' }, `✕ ${errorWords(state.lastError)}`) : null));
    }));
    if (list.parentNode !== listArea) replace(listArea, list);
  }

  if (triggers().length > 0) open(triggers()[0]!.id);
  else open(undefined);

  return {
    element,
    update() {
      // A trigger gone opens the first; the first trigger to appear (another device made it) opens too.
      if (selected === undefined ? triggers().length > 0 : selected !== 'new' && !triggers().some((trigger) => trigger.id === selected)) open(triggers()[0]?.id);
      renderList();
      editor?.update();
    },
  };
};

/** The editor of one trigger (or a new one), with its live URL, state and ledger. */
class TriggerEditor {
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
  private readonly connection = h('select', { required: true });
  private readonly connectionNote = h('small', { class: 'meta' });
  private connectButton: HTMLButtonElement | undefined;
  private readonly pollInterval = h('input', { type: 'number', min: 15, max: 86400, step: 1, inputmode: 'numeric', class: 'narrow' });
  private readonly maxFollowUps = h('input', { type: 'number', min: 0, max: 1000, step: 1, inputmode: 'numeric', class: 'narrow' });
  private readonly filterInputs: { field: FilterField; input: HTMLInputElement | HTMLTextAreaElement }[] = [];
  private readonly comment = checkbox('Comment on the issue (one comment per run, kept current)', false);
  private readonly agent = checkbox('Start runs from agent sessions instead of the filter', false);
  private readonly marks = { started: h('input', { type: 'text' }), succeeded: h('input', { type: 'text' }), failed: h('input', { type: 'text' }) };

  constructor(private readonly context: AppContext, private readonly trigger: TriggerConfig | undefined, draft: { kind: TriggerKind; name: string },
    private readonly on: { saved(trigger: TriggerConfig | undefined): void; changeKind(kind: TriggerKind, name: string): void }) {
    const isNew = !trigger;
    this.kind = trigger?.kind ?? draft.kind;
    this.provider = providerForms[this.kind];
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
      this.provider ? this.providerFields(this.provider) : null,
      this.kind === 'linear' ? this.agentGroup() : null,
      this.fields.field('webhookSecret', 'Webhook secret',
        h('div', { class: 'input-row' }, this.secret, show, ownSecret ? regenerate : null, clear)),
      this.secretHint,
      this.provider?.marks ? this.writeBackGroup(this.provider.marks) : null,
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

  /** The account, the filter and the poll interval of a tracker trigger. */
  private providerFields(provider: ProviderForm): HTMLElement[] {
    this.pollInterval.value = String(this.trigger?.pollIntervalSec ?? 60);
    this.fillConnections();
    const filters = provider.filter.map((field) => {
      const input = field.multiline
        ? h('textarea', { rows: 3, spellcheck: 'false', placeholder: field.placeholder })
        : h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: field.placeholder });
      const value = this.trigger?.filter?.[field.name];
      input.value = Array.isArray(value) ? value.join(', ') : value ?? '';
      this.filterInputs.push({ field, input });
      const element = this.fields.field(`filter.${field.name}`, field.label, input, field.hint);
      if (field.multiline) element.classList.add('wide');
      return element;
    });
    this.maxFollowUps.value = String(this.trigger?.maxFollowUps ?? 3);
    const followUps = provider.followUps ? this.fields.field('maxFollowUps', 'Follow-ups per pull request', this.maxFollowUps, 'Runs one pull request’s reviews may start; later reviews are ignored. Default 3.') : null;
    return [
      this.fields.field('connectionId', 'Account', this.connection), this.connectionNote,
      h('div', { class: 'form-grid' }, filters, this.fields.field('pollIntervalSec', 'Poll every (seconds)', this.pollInterval, 'Default 60, at least 15.'), followUps),
    ];
  }

  /** A Linear trigger as the workspace's agent: runs start from delegated or mentioned issues (issue 27). */
  private agentGroup(): HTMLElement {
    this.agent.input.checked = this.trigger?.agent === true;
    return this.fields.group('agent', 'Linear agent', this.agent.element,
      'Runs start from issues delegated to your Linear app or where it is mentioned, and the issue shows the run; the filter and polling are not used. In the app’s settings in Linear, enable webhooks with Agent session events, sent to the URL below, and set the app’s webhook signing secret here (required).');
  }

  /** What a run reports back on its issue: a comment, and marks when it starts and ends. */
  private writeBackGroup(kinds: NonNullable<ProviderForm['marks']>): HTMLElement {
    const writeBack = this.trigger?.writeBack;
    this.comment.input.checked = writeBack?.comment ?? false;
    const marks = (Object.keys(markWords) as (keyof WriteBackMarks)[]).map((mark) => {
      this.marks[mark].value = writeBack?.[kinds.name]?.[mark] ?? '';
      return this.fields.field(`writeBack.${kinds.name}.${mark}`, `${kinds.noun} ${markWords[mark]}`, this.marks[mark]);
    });
    return this.fields.group('writeBack', 'Report back on the issue', [this.comment.element, h('div', { class: 'form-grid marks' }, marks)], kinds.hint);
  }

  /** Re-renders what the events change: the pipeline and account choices, the URL, the state and the ledger. */
  update(): void {
    this.fillPipelines();
    this.fillConnections();
    if (!this.trigger) {
      replace(this.live, h('p', { class: 'muted' }, 'Save the trigger to get its webhook URL.'));
      return;
    }
    const snapshot = this.context.state.snapshot;
    const state = snapshot?.triggerStates[this.trigger.id];
    // The events first: what happened is what a saved trigger is opened for (its settings follow).
    replace(this.live, this.stateSection(state), this.ledgerSection(state), this.trigger.kind === 'webhook' || this.provider ? this.urlSection(state) : null);
  }

  /** The accounts of this trigger's kind; the only one is chosen for a new trigger. */
  private fillConnections(): void {
    if (!this.provider) return;
    const accountKind = this.provider.accountKind ?? this.kind;
    const accounts = (this.context.state.snapshot?.accounts ?? []).filter((account) => account.kind === accountKind);
    const name = kindNames[accountKind];
    const current = this.connection.value || this.trigger?.connectionId || (accounts.length === 1 ? accounts[0]!.id : '');
    replace(this.connection,
      option('', accounts.length ? 'Choose an account…' : `No ${name} account yet`, current),
      accounts.map((account) => option(account.id, account.account ? `${account.name} (${account.account.name})` : account.name, current)));
    // A new account is connected in place, in a dialog: the draft stays and the account comes back chosen.
    this.connectButton ??= connectButton(this.context, accountKind as ConnectionKind, name ?? accountKind, (saved) => {
      this.fillConnections();
      this.connection.value = saved.id;
      this.connection.dispatchEvent(new Event('change', { bubbles: true }));
    });
    this.connectButton.textContent = accounts.length ? `Connect another ${name} account` : `Connect a ${name} account`;
    replace(this.connectionNote, accounts.length ? null : `No ${name} account yet. `, this.connectButton);
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
    this.secretHint.textContent = this.secret.value
      ? this.provider?.secretHint ?? 'Each request must send it as ?token=…, the X-Factory-Token header, or Authorization: Bearer …. Saved when you save.'
      : this.provider?.followUps
        ? 'No secret: every delivery is refused, since a review starts work that gets pushed. Set the secret GitHub signs its deliveries with; polling needs none.'
        : this.provider
        ? `No secret: events are not verified, so each one costs a request to ${kindNames[this.kind]} for the issue it names. ${this.provider.tokenInUrl ? 'Regenerate one' : `Set the secret ${kindNames[this.kind]} signs its deliveries with`}; polling needs none.`
        : 'No secret: anyone who can reach the URL can start runs.';
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
    if (!this.provider) return input;
    if (!input.webhookSecret) delete input.webhookSecret;
    input.connectionId = this.connection.value;
    if (this.kind === 'linear' && this.agent.input.checked) input.agent = true;
    if (this.pollInterval.value.trim()) input.pollIntervalSec = Number(this.pollInterval.value);
    const filter: Record<string, string | string[]> = {};
    for (const { field, input: control } of this.filterInputs) {
      const text = control.value.trim();
      if (text) filter[field.name] = field.list ? text.split(',').map((item) => item.trim()).filter(Boolean) : text;
    }
    if (Object.keys(filter).length > 0) input.filter = filter as TriggerFilter;
    if (this.provider.followUps && this.maxFollowUps.value.trim()) input.maxFollowUps = Number(this.maxFollowUps.value);
    if (!this.provider.marks) return input;
    const marks: WriteBackMarks = {};
    for (const [mark, control] of Object.entries(this.marks)) if (control.value.trim()) marks[mark as keyof WriteBackMarks] = control.value.trim();
    input.writeBack = { comment: this.comment.input.checked };
    if (Object.keys(marks).length > 0) input.writeBack[this.provider.marks.name] = marks;
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

  /** What a Jira trigger checks of a webhook event against its query (the engine reads the projects from the saved query). */
  private webhookCheck(state: TriggerState | undefined): HTMLElement | null {
    if (this.kind !== 'jira') return null;
    const projects = state?.webhookProjects;
    return h('p', { class: 'meta', 'data-test': 'webhook-check' }, projects
      ? `Webhook events are checked for project ${projects.join(', ')} (and the labels above); the rest of the query is checked only when polls read issues.`
      : 'Webhook events are not checked against this query, since it names no project plainly (project = ABC, joined to the rest by AND): events of any project start runs (the labels above are checked). Narrow the webhook in Jira with its own JQL.');
  }

  private urlSection(state: TriggerState | undefined): HTMLElement {
    const snapshot = this.context.state.snapshot;
    const base = snapshot?.webhookUrl;
    if (!base) {
      return h('div', { class: 'panel' },
        h('h3', {}, 'Webhook URL'),
        h('p', {}, this.provider ? `The webhook server is off: ${kindNames[this.kind]} cannot send issues here, so they arrive only by polling. ` : 'The webhook server is off, so nothing can reach this trigger. ',
          h('a', { href: '#/settings' }, 'Switch on the webhook server in Settings'), '.'),
        snapshot?.webhookError ? h('p', { class: 'field-error' }, `✕ ${snapshot.webhookError}`) : null);
    }
    const url = `${base.replace(/\/+$/, '')}/hooks/${this.trigger!.id}`;
    // The saved secret, not the one being typed: the URL works as it is shown.
    const token = this.tokenInUrl && this.trigger!.webhookSecret ? `?token=${encodeURIComponent(this.trigger!.webhookSecret)}` : '';
    const shown = token && this.secret.type === 'password' ? `${url}?token=•••` : url + token;
    const copyButton = (label: string, what: string, text: string) => h('button', { type: 'button', onclick: async () => {
      const copied = await copyText(text);
      this.context.toast(copied ? `${what} copied` : `Could not copy: ${token ? 'show the secret, then ' : ''}select the URL and copy it by hand`, copied ? 'ok' : 'error');
    } }, label);
    const generic = this.kind === 'webhook';
    const curl = `curl -X POST '${url + token}' -H 'Content-Type: application/json' -d '{"title": "Login fails on Safari", "key": "WEB-12", "description": "Steps to reproduce: …"}'`;
    const test = h('button', { type: 'button', 'data-test': 'send-test-event', onclick: () => void this.sendTestEvent(test) }, 'Send test event');
    return h('div', { class: 'panel' },
      h('h3', {}, 'Webhook URL'),
      h('div', { class: 'input-row' }, h('code', { class: 'url', tabindex: '0' }, shown), copyButton('Copy', 'Webhook URL', url + token)),
      generic ? h('div', { class: 'form-actions' }, copyButton('Copy as curl', 'curl command', curl), test) : null,
      h('p', { class: 'meta' }, this.provider?.urlHint ?? 'POST a JSON body with at least a title: {"title": "…", "key": "…", "description": "…"}. The same key never starts two runs. Send test event posts one through the webhook server, as a sender would.'),
      this.webhookCheck(state));
  }

  private async sendTestEvent(button: HTMLButtonElement): Promise<void> {
    try {
      const result = await withBusy(button, 'Sending…', () => this.context.api.sendTestEvent(this.trigger!.id));
      if (result.ok) this.context.toast('Test event accepted: a run started (see Recent events)');
      else this.context.toast(`The webhook server answered ${result.status ? `HTTP ${result.status}: ` : ''}${result.error ?? 'an error'}`, 'error');
    } catch (error) {
      this.context.toast(errorText(error), 'error');
    }
  }

  private stateSection(state: TriggerState | undefined): HTMLElement {
    const limitedUntil = state?.rateLimitedUntil !== undefined && state.rateLimitedUntil > Date.now() ? state.rateLimitedUntil : undefined;
    // The poller's error for a rate limit already says until when (and the service's words): shown once, as the warning.
    const limitError = limitedUntil !== undefined && state?.lastError?.startsWith('Rate limited until ') ? state.lastError : undefined;
    return h('p', { class: 'meta trigger-state' },
      this.provider ? ['Last poll ', timeElement(state?.lastPollAt), ' · next poll ', timeElement(state?.nextPollAt), ' · last event '] : 'Last event ',
      timeElement(state?.lastEventAt), ` · ${state?.processedCount ?? 0} processed`,
      limitedUntil ? h('span', { class: 'warning' }, ` · ${limitError ?? `Rate limited until ${new Date(limitedUntil).toLocaleTimeString()}`}`) : null,
      state?.lastError && !limitError ? errorElement(state.lastError, 'item-error', ' · ✕ ') : null);
  }

  private ledgerSection(state: TriggerState | undefined): HTMLElement {
    const entries = state?.ledger ?? [];
    const heading = h('h3', {}, 'Recent events');
    if (entries.length === 0) {
      return h('div', { class: 'ledger' }, heading, h('div', { class: 'empty' }, this.provider
        ? 'No events yet. Poll now, or wait for the next poll: each issue shows here with what was decided.'
        : 'No events yet. Send a request to the webhook URL: each one shows here with what was decided.'));
    }
    return h('div', { class: 'ledger' }, heading, eventTable(this.context, entries));
  }
}
