// The tracker part of the trigger editor's form (trigger-editor.ts), for a Linear, GitHub,
// GitHub reviews or Jira trigger: the account (connected in place), the filter, the poll interval,
// the follow-ups, Linear's agent mode and the write-back, read into a TriggerInput.

import type { ConnectionKind, TriggerConfig, TriggerInput, TriggerFilter, TriggerKind, WriteBackMarks } from '../../src/core/api';
import type { AppContext } from '../app';
import { h, replace } from '../dom';
import { connectButton } from './connect-dialog';
import { checkbox } from './form';
import { option, type FormFields } from './settings-form';
import { kindNames, markWords, type FilterField, type ProviderForm } from './trigger-kinds';

/** The tracker fields of one trigger editor. */
export class TrackerFields {
  private readonly connection = h('select', { required: true });
  private readonly connectionNote = h('small', { class: 'meta' });
  private connectButton: HTMLButtonElement | undefined;
  private readonly pollInterval = h('input', { type: 'number', min: 15, max: 86400, step: 1, inputmode: 'numeric', class: 'narrow' });
  private readonly maxFollowUps = h('input', { type: 'number', min: 0, max: 1000, step: 1, inputmode: 'numeric', class: 'narrow' });
  private readonly filterInputs: { field: FilterField; input: HTMLInputElement | HTMLTextAreaElement }[] = [];
  private readonly comment = checkbox('Comment on the issue (one comment per run, kept current)', false);
  private readonly agent = checkbox('Start runs from agent sessions instead of the filter', false);
  private readonly marks = { started: h('input', { type: 'text' }), succeeded: h('input', { type: 'text' }), failed: h('input', { type: 'text' }) };

  constructor(private readonly context: AppContext, private readonly trigger: TriggerConfig | undefined, private readonly kind: TriggerKind,
    private readonly provider: ProviderForm, private readonly fields: FormFields) {}

  /** The account, the filter and the poll interval of a tracker trigger. */
  elements(): HTMLElement[] {
    const provider = this.provider;
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
  agentGroup(): HTMLElement {
    this.agent.input.checked = this.trigger?.agent === true;
    return this.fields.group('agent', 'Linear agent', this.agent.element,
      'Runs start from issues delegated to your Linear app or where it is mentioned, and the issue shows the run; the filter and polling are not used. In the app’s settings in Linear, enable webhooks with Agent session events, sent to the URL below, and set the app’s webhook signing secret here (required).');
  }

  /** What a run reports back on its issue: a comment, and marks when it starts and ends. */
  writeBackGroup(kinds: NonNullable<ProviderForm['marks']>): HTMLElement {
    const writeBack = this.trigger?.writeBack;
    this.comment.input.checked = writeBack?.comment ?? false;
    const marks = (Object.keys(markWords) as (keyof WriteBackMarks)[]).map((mark) => {
      this.marks[mark].value = writeBack?.[kinds.name]?.[mark] ?? '';
      return this.fields.field(`writeBack.${kinds.name}.${mark}`, `${kinds.noun} ${markWords[mark]}`, this.marks[mark]);
    });
    return this.fields.group('writeBack', 'Report back on the issue', [this.comment.element, h('div', { class: 'form-grid marks' }, marks)], kinds.hint);
  }

  /** The accounts of this trigger's kind; the only one is chosen for a new trigger. */
  fillConnections(): void {
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

  /** Puts the account, the filter, the follow-ups and the write-back in `input`. */
  read(input: TriggerInput): void {
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
    if (!this.provider.marks) return;
    const marks: WriteBackMarks = {};
    for (const [mark, control] of Object.entries(this.marks)) if (control.value.trim()) marks[mark as keyof WriteBackMarks] = control.value.trim();
    input.writeBack = { comment: this.comment.input.checked };
    if (Object.keys(marks).length > 0) input.writeBack[this.provider.marks.name] = marks;
  }
}
