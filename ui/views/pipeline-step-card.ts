// A pipeline's step as a card in the editor (pipeline-editor.ts): a one-line overview that opens
// to the fields of its kind (shell, agent, approval, pull request), and `read()`, which turns the
// fields back into a Step. Also the fresh step each Add button puts in.

import type { AgentStep, ApprovalStep, GenerateTarget, PullRequestStep, ShellStep, Snapshot, Step, StepKind } from '../../src/core/api';
import { h, replace } from '../dom';
import { harnessChoices } from './pipelines';
import { budgetFields } from './budget-fields';
import { checkbox, field, keyValueEditor, selectInput, textArea, textInput, uniqueId } from './form';

export const kindLabels: Record<StepKind, string> = { shell: 'Shell', agent: 'Agent', approval: 'Approval', pullRequest: 'Pull request' };

export function numberInput(value: number | undefined, attributes: Record<string, string>): HTMLInputElement {
  const input = h('input', { type: 'number', inputmode: 'numeric', step: '1', ...attributes });
  input.value = value === undefined ? '' : String(value);
  return input;
}

/** The number in `input`, or undefined when it is empty. */
export function readNumber(input: HTMLInputElement): number | undefined {
  return input.value.trim() === '' ? undefined : Number(input.value);
}

/** Sets an optional text property only when it has content. */
export function optional<T extends object, K extends keyof T>(target: T, key: K, value: string): void {
  if (value.trim() !== '') target[key] = value as T[K];
}

export interface GenerateHost {
  /** Opens a generation box for `target`, filling `control` with the result. */
  generateBox(target: GenerateTarget, control: HTMLTextAreaElement, card: HTMLElement | null): HTMLElement;
  /** The agent an agent step with this harness id runs with, in words ("Claude Code, not installed"). */
  agentWords(harnessId: string): string;
}

/** One step card: its fields, a reader that turns them back into a Step; `open` shows the fields, `refresh` rewrites the one-line overview. */
export interface StepCard {
  element: HTMLLIElement;
  read(): Step;
  idInput: HTMLInputElement;
  open(open: boolean): void;
  refresh(): void;
}

/** What a step uses, in one line: the command's first line, the agent and model, or the approval's message. */
function overviewOf(step: Step, host: GenerateHost): string {
  const firstLine = (text: string) => text.trim().split('\n')[0] || '(empty)';
  if (step.kind === 'shell') return firstLine(step.command);
  if (step.kind === 'agent') return `${host.agentWords(step.harnessId ?? '')} · ${step.model || 'default model'} · ${firstLine(step.prompt)}`;
  if (step.kind === 'pullRequest') return `Pull request to ${step.repository || `the repository of ${step.remote || 'origin'}`}${step.base ? ` · ${step.base}` : ''}${step.draft ? ' · draft' : ''}`;
  return firstLine(step.message);
}

export function stepCard(step: Step, snapshot: Snapshot | undefined, host: GenerateHost, onChange: () => void): StepCard {
  const element = h('li', { class: 'step-card', 'data-kind': step.kind });
  const idInput = textInput(step.id, { 'data-key': 'id', spellcheck: 'false', autocomplete: 'off', pattern: '[a-z][a-z0-9_-]{0,39}' });
  const nameInput = textInput(step.name, { 'data-key': 'name' });
  const bodyId = uniqueId('step');
  const title = h('strong', {});
  const overview = h('span', { class: 'step-overview' });
  const toggle = h('button', { type: 'button', class: 'step-toggle', 'data-action': 'toggle', 'aria-expanded': 'false', 'aria-controls': bodyId }, title, overview);
  const errors = h('div', { class: 'step-errors', tabindex: '-1' });
  const label = () => nameInput.value || idInput.value || 'step';
  const header = h('div', { class: 'step-header' },
    h('span', { class: 'step-number', 'aria-hidden': 'true' }),
    h('h3', { class: 'step-title' }, toggle),
    h('button', { type: 'button', class: 'icon', 'data-action': 'up', title: 'Move up', 'aria-label': 'Move step up' }, '↑'),
    h('button', { type: 'button', class: 'icon', 'data-action': 'down', title: 'Move down', 'aria-label': 'Move step down' }, '↓'),
    h('button', { type: 'button', class: 'icon danger', 'data-action': 'remove', title: 'Remove step', 'aria-label': 'Remove step' }, '✕'));
  header.addEventListener('focusin', () => {
    // Screen readers hear which step a button moves or removes.
    for (const button of header.querySelectorAll('button[title]')) button.setAttribute('aria-label', `${(button as HTMLElement).title} ${label()}`);
  });

  const common = [field('Id', idInput, { field: 'id', hint: 'a-z 0-9 - _' }), field('Name', nameInput, { field: 'name' })];
  const retries = numberInput(step.retries, { min: '0', placeholder: '0' });
  const timeout = numberInput(step.timeoutSec, { min: '1', placeholder: '3600' });
  const continueOnError = checkbox('Continue the run when this step fails', step.continueOnError ?? false, { 'data-key': 'continueOnError' });
  const limits = [field('Timeout (s)', timeout, { field: 'timeoutSec' }), field('Retries', retries, { field: 'retries' })];
  const readLimits = (target: Step) => {
    const retriesValue = readNumber(retries);
    const timeoutValue = readNumber(timeout);
    if (retriesValue !== undefined) target.retries = retriesValue;
    if (timeoutValue !== undefined) target.timeoutSec = timeoutValue;
    if (continueOnError.input.checked) target.continueOnError = true;
  };

  let read: () => Step;
  let body: HTMLElement[];
  if (step.kind === 'shell') {
    const command = textArea(step.command, { 'data-test': 'step-command', rows: 4, spellcheck: 'false' });
    const env = keyValueEditor('Environment', step.env, { keyLabel: 'Variable name', addLabel: 'Add variable', field: 'env', onChange });
    body = [
      h('div', { class: 'field-grid' }, ...common),
      h('div', { class: 'field-block' }, field('Command', command, { field: 'command', wide: true, hint: 'Runs with sh in the workspace. Templates such as {{issue.title}} are filled in.' }), host.generateBox('command', command, element)),
      env.element,
      h('div', { class: 'field-grid' }, ...limits, continueOnError.element),
    ];
    read = () => {
      const result: ShellStep = { kind: 'shell', id: idInput.value.trim(), name: nameInput.value, command: command.value };
      const variables = env.read();
      if (Object.keys(variables).length) result.env = variables;
      readLimits(result);
      return result;
    };
  } else if (step.kind === 'agent') {
    const prompt = textArea(step.prompt, { rows: 6 });
    const systemPrompt = textArea(step.systemPrompt, { rows: 3 });
    const harness = selectInput([['', 'Pipeline default'], ...harnessChoices(snapshot)], step.harnessId, { 'data-key': 'harnessId' });
    const model = textInput(step.model, { placeholder: 'Harness default', spellcheck: 'false' });
    const stall = numberInput(step.stallSec, { min: '1', placeholder: '600' });
    const onStall = selectInput([['', 'Only tell me'], ['cancel', 'Cancel the step'], ['retry', 'Stop it and try again']], step.onStall ?? '', { 'data-key': 'onStall' });
    const budget = budgetFields(step.budget, 'step');
    body = [
      h('div', { class: 'field-grid' }, ...common, field('Harness', harness, { field: 'harnessId' }), field('Model', model, { field: 'model' })),
      h('div', { class: 'field-block' }, field('Prompt', prompt, { field: 'prompt', wide: true }), host.generateBox('prompt', prompt, element)),
      h('div', { class: 'field-block' }, field('System prompt', systemPrompt, { field: 'systemPrompt', wide: true, hint: 'Optional.' }), host.generateBox('systemPrompt', systemPrompt, element)),
      h('div', { class: 'field-grid' }, field('Stall warning (s)', stall, { field: 'stallSec', hint: 'No output for this long: an inbox item.' }), field('On a stall', onStall, { field: 'onStall' }), ...limits, continueOnError.element),
      budget.element,
    ];
    read = () => {
      const result: AgentStep = { kind: 'agent', id: idInput.value.trim(), name: nameInput.value, prompt: prompt.value };
      optional(result, 'systemPrompt', systemPrompt.value);
      optional(result, 'harnessId', harness.value);
      optional(result, 'model', model.value);
      const stallValue = readNumber(stall);
      if (stallValue !== undefined) result.stallSec = stallValue;
      if (onStall.value) result.onStall = onStall.value as NonNullable<AgentStep['onStall']>;
      const caps = budget.read();
      if (caps) result.budget = caps;
      readLimits(result);
      return result;
    };
  } else if (step.kind === 'pullRequest') {
    const accounts = (snapshot?.accounts ?? []).filter((account) => account.kind === 'github').map((account): [string, string] => [account.id, account.name]);
    const account = selectInput([['', accounts.length > 0 ? 'Choose a GitHub account' : 'No GitHub account yet: add one in Settings'], ...accounts], step.connectionId || accounts[0]?.[0], { 'data-key': 'connectionId' });
    const repository = textInput(step.repository, { placeholder: "Read from the remote's URL", spellcheck: 'false', autocomplete: 'off' });
    const remote = textInput(step.remote, { placeholder: 'origin', spellcheck: 'false', autocomplete: 'off' });
    const base = textInput(step.base, { placeholder: "The repository's default branch", spellcheck: 'false', autocomplete: 'off' });
    const prTitle = textInput(step.title, { placeholder: '{{issue.title}}' });
    const prBody = textArea(step.body, { rows: 4, placeholder: 'Default: what the run did, the issue, the run' });
    const draft = checkbox('Open as a draft', step.draft ?? false, { 'data-key': 'draft' });
    body = [
      h('div', { class: 'field-grid' }, ...common, field('GitHub account', account, { field: 'connectionId' })),
      h('div', { class: 'field-grid' },
        field('Repository', repository, { field: 'repository', hint: 'owner/name' }),
        field('Remote', remote, { field: 'remote', hint: 'The git remote pushed to, with your own git credentials.' }),
        field('Base branch', base, { field: 'base' })),
      field('Title', prTitle, { field: 'title', wide: true, hint: 'Templates such as {{issue.title}} are filled in.' }),
      field('Description', prBody, { field: 'body', wide: true, hint: 'The issue is named in it either way, so its tracker links the pull request.' }),
      h('div', { class: 'field-grid' }, draft.element, ...limits, continueOnError.element),
    ];
    read = () => {
      const result: PullRequestStep = { kind: 'pullRequest', id: idInput.value.trim(), name: nameInput.value, connectionId: account.value };
      optional(result, 'repository', repository.value.trim());
      optional(result, 'remote', remote.value.trim());
      optional(result, 'base', base.value.trim());
      optional(result, 'title', prTitle.value);
      optional(result, 'body', prBody.value);
      if (draft.input.checked) result.draft = true;
      readLimits(result);
      return result;
    };
  } else {
    const message = textArea(step.message, { rows: 3 });
    const mode = selectInput([['', 'None: approve or reject'], ['single', 'Pick one option'], ['multiple', 'Pick several options']], step.choices?.mode ?? '', { 'data-key': 'choices.mode' });
    const options = h('ol', { class: 'option-rows' });
    const addOption = (value: string, focus: boolean) => {
      const input = textInput(value, { 'aria-label': 'Option label', class: 'option-input' });
      options.appendChild(h('li', {}, input, h('button', { type: 'button', class: 'icon', 'data-action': 'option-remove', 'aria-label': 'Remove option', title: 'Remove option' }, '✕')));
      if (focus) input.focus();
    };
    for (const option of step.choices?.options ?? []) addOption(option, false);
    options.addEventListener('click', (event) => {
      const button = (event.target as HTMLElement).closest('[data-action="option-remove"]');
      if (!button) return;
      event.stopPropagation();
      button.closest('li')!.remove();
      onChange();
    });
    const optionsBox = h('fieldset', { class: 'kv', 'data-field': 'choices.options' },
      h('legend', {}, 'Options'), options,
      h('button', { type: 'button', class: 'small', onclick: () => { addOption('', true); onChange(); } }, 'Add option'));
    const syncMode = () => {
      optionsBox.hidden = mode.value === '';
      if (mode.value !== '' && options.children.length === 0) { addOption('Yes', false); addOption('No', false); }
    };
    mode.addEventListener('change', syncMode);
    optionsBox.hidden = mode.value === '';
    body = [
      h('div', { class: 'field-grid' }, ...common),
      field('Message', message, { field: 'message', wide: true, hint: 'What the person decides on; templates are filled in.' }),
      h('div', { class: 'field-grid' }, field('Choices', mode, { field: 'choices.mode' })),
      optionsBox,
    ];
    read = () => {
      const result: ApprovalStep = { kind: 'approval', id: idInput.value.trim(), name: nameInput.value, message: message.value };
      if (mode.value === 'single' || mode.value === 'multiple') {
        result.choices = { mode: mode.value, options: Array.from(options.querySelectorAll<HTMLInputElement>('input')).map((input) => input.value) };
      }
      return result;
    };
  }
  const bodyElement = h('div', { class: 'step-body', id: bodyId, hidden: true }, ...body);
  replace(element, header, errors, bodyElement);
  const refresh = () => {
    title.textContent = `${kindLabels[step.kind]} · ${nameInput.value || idInput.value || 'unnamed step'}`;
    overview.textContent = overviewOf(read(), host);
  };
  element.addEventListener('input', refresh);
  element.addEventListener('change', refresh);
  refresh();
  const open = (value: boolean) => {
    bodyElement.hidden = !value;
    element.classList.toggle('open', value);
    toggle.setAttribute('aria-expanded', String(value));
  };
  return { element, read, idInput, open, refresh };
}

/** A fresh step of `kind` whose id is not in `taken`. */
export function newStep(kind: StepKind, taken: Set<string>): Step {
  const stem = kind === 'pullRequest' ? 'pull-request' : kind; // step ids are lower-case
  let id: string = stem;
  for (let number = 2; taken.has(id); number += 1) id = `${stem}-${number}`;
  if (kind === 'shell') return { kind, id, name: 'New shell step', command: 'echo "Working on {{issue.title}}"' };
  if (kind === 'agent') return { kind, id, name: 'New agent step', prompt: '' };
  if (kind === 'pullRequest') return { kind, id, name: 'Pull request', connectionId: '' };
  return { kind, id, name: 'Approve', message: 'Continue?' };
}
