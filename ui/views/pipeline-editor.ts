// The Pipeline editor: the pipeline's settings, its steps as one-line cards opened one at a time,
// Save (problems in words at their fields, warnings in amber), text generation beside the long
// texts, and a Run panel that says which agents are missing before a run fails. The form is the
// working copy: structural edits move card elements, and `read()` turns it into a PipelineInput.

import type { AgentStep, ApprovalStep, FieldMessage, GenerateTarget, Pipeline, PipelineInput, PullRequestStep, ShellStep, Snapshot, Step, StepKind } from '../../src/core/api';
import { errorText, type AppContext, type ScreenFactory } from '../app';
import { h, replace, timeElement } from '../dom';
import { confirmAction } from './dialog';
import { watchForm } from './drafts';
import { harnessChoices, takeRunPanelRequest } from './pipelines';
import { agentOf, missingAgents, missingAgentsNotice, noAgentNote } from './readiness';
import { budgetFields } from './budget-fields';
import { checkbox, clearFieldErrors, field, keyValueEditor, problemsOf, selectInput, showFieldError, textArea, textInput, uniqueId, withBusy } from './form';
import { plainRunnerName, runnerChoices } from './runner-words';

const kindLabels: Record<StepKind, string> = { shell: 'Shell', agent: 'Agent', approval: 'Approval', pullRequest: 'Pull request' };
const targetLabels: Record<GenerateTarget, string> = { prompt: 'prompt', systemPrompt: 'system prompt', command: 'command' };

function numberInput(value: number | undefined, attributes: Record<string, string>): HTMLInputElement {
  const input = h('input', { type: 'number', inputmode: 'numeric', step: '1', ...attributes });
  input.value = value === undefined ? '' : String(value);
  return input;
}

/** The number in `input`, or undefined when it is empty. */
function readNumber(input: HTMLInputElement): number | undefined {
  return input.value.trim() === '' ? undefined : Number(input.value);
}

/** Sets an optional text property only when it has content. */
function optional<T extends object, K extends keyof T>(target: T, key: K, value: string): void {
  if (value.trim() !== '') target[key] = value as T[K];
}

interface GenerateHost {
  /** Opens a generation box for `target`, filling `control` with the result. */
  generateBox(target: GenerateTarget, control: HTMLTextAreaElement, card: HTMLElement | null): HTMLElement;
  /** The agent an agent step with this harness id runs with, in words ("Claude Code, not installed"). */
  agentWords(harnessId: string): string;
}

/** One step card: its fields, a reader that turns them back into a Step; `open` shows the fields, `refresh` rewrites the one-line overview. */
interface StepCard {
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

function stepCard(step: Step, snapshot: Snapshot | undefined, host: GenerateHost, onChange: () => void): StepCard {
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

/** A message as a field of a step card shows it: the card says which step, so "Step 2: the id …" reads "The id …". */
function atField(container: HTMLElement, message: string): string {
  return container.closest('.step-card') ? message.replace(/^Step \d+: (\S)/, (_match, letter: string) => letter.toUpperCase()) : message;
}

/** Shows a warning at a field container, after its control, in amber; the controls are described by it but stay valid. */
function showFieldWarning(container: HTMLElement, message: string): void {
  const warning = h('p', { class: 'field-warning', 'data-test': 'field-warning', id: uniqueId('warning') }, atField(container, message));
  container.appendChild(warning);
  const controls = container.matches('input, select, textarea') ? [container] : Array.from(container.querySelectorAll<HTMLElement>('input, select, textarea'));
  for (const control of controls) {
    const described = control.getAttribute('aria-describedby');
    control.setAttribute('aria-describedby', described ? `${described} ${warning.id}` : warning.id);
  }
}

/** Removes the warnings under `root`, and their ids from the controls they described. */
function clearFieldWarnings(root: HTMLElement): void {
  const removed = new Set<string>();
  for (const warning of root.querySelectorAll('.field-warning[data-test="field-warning"]')) {
    removed.add(warning.id);
    warning.remove();
  }
  if (removed.size === 0) return;
  for (const control of root.querySelectorAll<HTMLElement>('[aria-describedby]')) {
    const kept = control.getAttribute('aria-describedby')!.split(' ').filter((id) => !removed.has(id));
    if (kept.length > 0) control.setAttribute('aria-describedby', kept.join(' '));
    else control.removeAttribute('aria-describedby');
  }
}

/** A fresh step of `kind` whose id is not in `taken`. */
function newStep(kind: StepKind, taken: Set<string>): Step {
  const stem = kind === 'pullRequest' ? 'pull-request' : kind; // step ids are lower-case
  let id: string = stem;
  for (let number = 2; taken.has(id); number += 1) id = `${stem}-${number}`;
  if (kind === 'shell') return { kind, id, name: 'New shell step', command: 'echo "Working on {{issue.title}}"' };
  if (kind === 'agent') return { kind, id, name: 'New agent step', prompt: '' };
  if (kind === 'pullRequest') return { kind, id, name: 'Pull request', connectionId: '' };
  return { kind, id, name: 'Approve', message: 'Continue?' };
}

class PipelineEditorView implements GenerateHost {
  readonly element = h('section', { class: 'page pipeline-editor' });
  readonly summary = h('div', { class: 'form-summary', role: 'alert', tabindex: '-1', hidden: true });
  readonly notice = h('p', { class: 'notice', role: 'status', hidden: true });
  readonly dirtyNote = h('span', { class: 'meta dirty-note', role: 'status' });
  readonly save = h('button', { type: 'button', class: 'primary', 'data-test': 'save-pipeline' }, 'Save');
  readonly form = h('form', { class: 'editor-form', novalidate: true });
  readonly steps = h('ol', { class: 'step-list', 'aria-label': 'Steps' });
  readonly cards = new Map<HTMLElement, StepCard>();
  readonly runTitle = textInput('', { name: 'issue-title', placeholder: 'Fix the login redirect' });
  readonly runDescription = textArea('', { rows: 2, name: 'issue-description' });
  readonly runStart = h('button', { type: 'submit', class: 'primary' }, 'Start run');
  readonly runNote = h('p', { class: 'meta', role: 'status' });
  readonly runReadiness = h('div', {});
  readonly heading = h('h1', {});
  readonly crumb = h('span', {});
  readonly updated = h('span', { class: 'meta' });
  /** On a phone, where the Run panel is far below, brings it into view. */
  readonly runJump = h('button', { type: 'button', class: 'run-jump', onclick: () => this.showRunPanel() }, 'Run');
  private readonly summaryTargets = new Map<HTMLElement, HTMLElement>();
  private readDefaultHarness: () => string = () => '';
  runVariables = keyValueEditor('Variables', {}, { keyLabel: 'Variable', addLabel: 'Add variable' });
  readonly runForm: HTMLFormElement;
  private readVariables: () => Record<string, string> = () => ({});
  private readGeneral: () => Omit<PipelineInput, 'steps' | 'variables'> = () => ({ projectId: '', name: '' });
  onStepsChanged: () => void = () => undefined;
  /** Set by the controller: runs a generation for a box. */
  onGenerate: (request: { target: GenerateTarget; control: HTMLTextAreaElement; card: HTMLElement | null; instructions: string; harnessId: string; button: HTMLButtonElement; cancel: HTMLButtonElement; status: HTMLElement }) => void = () => undefined;
  snapshot: Snapshot | undefined;

  constructor() {
    this.runForm = h('form', { class: 'panel run-panel', 'aria-label': 'Run this pipeline' });
  }

  /** Builds the whole form for `pipeline`. */
  render(pipeline: Pipeline, snapshot: Snapshot | undefined): void {
    this.snapshot = snapshot;
    this.cards.clear();
    const name = textInput(pipeline.name, { 'data-test': 'pipeline-name', required: true, autocomplete: 'off' });
    const projects = (snapshot?.projects ?? []).map((project): [string, string] => [project.id, project.name]);
    const project = selectInput(projects.length ? projects : [['', 'No project: add one on Projects']], pipeline.projectId);
    const description = textArea(pipeline.description, { rows: 2 });
    const harness = selectInput([['', 'Settings default'], ...harnessChoices(snapshot)], pipeline.harnessId);
    const model = textInput(pipeline.model, { placeholder: 'Harness default', spellcheck: 'false' });
    const parallel = numberInput(pipeline.maxParallelRuns, { min: '1', placeholder: 'Global limit' });
    // The runner: the project's unless one is chosen (runner-words.ts names the default).
    const runners = snapshot?.runners ?? [];
    const projectRunner = () => `Project’s runner (${plainRunnerName(runners, snapshot?.projects.find((candidate) => candidate.id === project.value)?.runnerId)})`;
    const runner = selectInput(runnerChoices(runners, projectRunner()), pipeline.runnerId, { 'data-test': 'pipeline-runner' });
    project.addEventListener('change', () => (runner.options[0]!.textContent = projectRunner()));
    const budget = budgetFields(pipeline.budget, 'run');
    const variables = keyValueEditor('Variables', pipeline.variables, { keyLabel: 'Variable name', addLabel: 'Add variable', field: 'variables', onChange: () => this.onStepsChanged() });
    this.readVariables = variables.read;
    this.readDefaultHarness = () => harness.value;
    this.readGeneral = () => {
      const general: Omit<PipelineInput, 'steps' | 'variables'> = { id: pipeline.id, createdAt: pipeline.createdAt, projectId: project.value, name: name.value };
      optional(general, 'description', description.value);
      optional(general, 'harnessId', harness.value);
      optional(general, 'model', model.value);
      optional(general, 'runnerId', runner.value);
      const parallelValue = readNumber(parallel);
      if (parallelValue !== undefined) general.maxParallelRuns = parallelValue;
      const caps = budget.read();
      if (caps) general.budget = caps;
      return general;
    };

    replace(this.steps);
    for (const step of pipeline.steps) this.addCard(step, false);
    this.renumber();
    // One step is shown whole; more are an overview, opened one at a time.
    if (pipeline.steps.length === 1) this.expand(this.orderedCards()[0]!);

    const addButtons = (['shell', 'agent', 'approval', 'pullRequest'] as StepKind[]).map((kind) =>
      h('button', { type: 'button', 'data-action': 'add-step', 'data-kind': kind }, `Add ${kindLabels[kind].toLowerCase()} step`));

    replace(this.form,
      h('div', { class: 'panel' },
        h('div', { class: 'field-grid' },
          field('Name', name, { field: 'name' }),
          field('Project', project, { field: 'projectId' }),
          field('Default harness', harness, { field: 'harnessId', hint: 'For agent steps that name none.' }),
          field('Default model', model, { field: 'model' }),
          field('Max parallel runs', parallel, { field: 'maxParallelRuns', hint: 'Empty: only the global limit.' }),
          field('Runner', runner, { field: 'runnerId', hint: 'Where its runs execute; a trigger may choose another.' })),
        budget.element,
        field('Description', description, { field: 'description', wide: true }),
        variables.element),
      h('div', { class: 'steps-heading', 'data-field': 'steps' }, h('h2', {}, 'Steps'), noAgentNote(snapshot, 'editor-no-agent')),
      this.steps,
      h('div', { class: 'toolbar add-steps' }, addButtons));

    this.renderRunPanel(pipeline);
    this.showSaved(pipeline);
    replace(this.element,
      h('p', { class: 'meta breadcrumb' }, h('a', { href: '#/pipelines' }, 'Pipelines'), ' / ', this.crumb),
      h('div', { class: 'editor-header' },
        this.heading,
        this.updated,
        h('span', { class: 'spacer' }),
        this.dirtyNote,
        this.runJump,
        this.save),
      this.notice,
      this.summary,
      h('div', { class: 'editor-columns' }, this.form, this.runForm));
  }

  private renderRunPanel(pipeline: Pipeline): void {
    this.runVariables = keyValueEditor('Variables', pipeline.variables, { keyLabel: 'Variable', addLabel: 'Add variable' });
    replace(this.runForm,
      h('h2', {}, 'Run'),
      field('Issue title', this.runTitle, { hint: 'Available as {{issue.title}}.' }),
      field('Issue description', this.runDescription),
      this.runVariables.element,
      this.runReadiness,
      this.runStart,
      this.runNote);
  }

  /** The name, the time and what the run needs, as saved: the heading and breadcrumb follow a rename. */
  showSaved(pipeline: Pipeline): void {
    this.heading.textContent = pipeline.name;
    this.crumb.textContent = pipeline.name;
    replace(this.updated, 'updated ', timeElement(pipeline.updatedAt));
    replace(this.runReadiness, missingAgentsNotice(missingAgents(pipeline, this.snapshot)));
  }

  showRunPanel(): void {
    this.runForm.scrollIntoView({ block: 'start' });
    this.runTitle.focus({ preventScroll: true });
  }

  agentWords(harnessId: string): string {
    const id = agentOf({ harnessId }, { harnessId: this.readDefaultHarness() }, this.snapshot);
    const missing = missingAgents({ steps: [{ kind: 'agent', id, name: '', prompt: '', harnessId: id }] }, this.snapshot)[0];
    return missing ? `${missing.name}, ${missing.reason}` : this.snapshot?.harnesses.find((harness) => harness.id === id)?.name ?? id;
  }

  /** Opens `card` and closes the others. */
  expand(card: StepCard): void {
    for (const other of this.cards.values()) other.open(other === card);
  }

  addCard(step: Step, focus: boolean): StepCard {
    const card = stepCard(step, this.snapshot, this, () => this.onStepsChanged());
    this.cards.set(card.element, card);
    this.steps.appendChild(card.element);
    if (focus) {
      this.renumber();
      this.expand(card);
      card.idInput.focus();
    }
    return card;
  }

  /** The step cards in their order. */
  orderedCards(): StepCard[] {
    return Array.from(this.steps.children).map((element) => this.cards.get(element as HTMLElement)!).filter(Boolean);
  }

  renumber(): void {
    this.orderedCards().forEach((card, index, all) => {
      card.element.querySelector('.step-number')!.textContent = String(index + 1);
      card.element.querySelector<HTMLButtonElement>('[data-action="up"]')!.disabled = index === 0;
      card.element.querySelector<HTMLButtonElement>('[data-action="down"]')!.disabled = index === all.length - 1;
    });
  }

  read(): PipelineInput {
    return { ...this.readGeneral(), variables: this.readVariables(), steps: this.orderedCards().map((card) => card.read()) };
  }

  generateBox(target: GenerateTarget, control: HTMLTextAreaElement, card: HTMLElement | null): HTMLElement {
    const boxId = uniqueId('generate');
    const noAgent = noAgentNote(this.snapshot)?.textContent ?? undefined;
    const toggle = h('button', { type: 'button', class: 'small generate-toggle', 'aria-expanded': 'false', 'aria-controls': boxId, disabled: Boolean(noAgent), title: noAgent, 'aria-describedby': noAgent && 'editor-no-agent' }, `Generate ${targetLabels[target]}…`);
    const instructions = textArea('', { rows: 2, placeholder: target === 'command' ? 'Run the unit tests with coverage' : 'Review the diff for security problems' });
    const harness = selectInput(harnessChoices(this.snapshot), this.snapshot?.settings.defaultHarnessId);
    const run = h('button', { type: 'button', class: 'primary small' }, 'Generate');
    const cancel = h('button', { type: 'button', class: 'small', hidden: true }, 'Cancel');
    const status = h('p', { class: 'meta', role: 'status', 'aria-live': 'polite' });
    const box = h('div', { class: 'generate-box', id: boxId, hidden: true },
      field(`What should the ${targetLabels[target]} do?`, instructions),
      h('div', { class: 'inline-form' }, field('Harness', harness), run, cancel),
      status);
    const close = () => {
      box.hidden = true;
      toggle.setAttribute('aria-expanded', 'false');
      toggle.focus();
    };
    toggle.addEventListener('click', () => {
      // The step's own harness, else the pipeline's default, is the likely choice.
      const preferred = card?.querySelector<HTMLSelectElement>('[data-field="harnessId"] select')?.value || this.form.querySelector<HTMLSelectElement>(':scope > .panel [data-field="harnessId"] select')?.value;
      if (box.hidden && preferred && Array.from(harness.options).some((option) => option.value === preferred)) harness.value = preferred;
      box.hidden = !box.hidden;
      toggle.setAttribute('aria-expanded', String(!box.hidden));
      if (!box.hidden) instructions.focus();
    });
    box.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && cancel.hidden) close();
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) run.click();
    });
    run.addEventListener('click', () => {
      if (!instructions.value.trim()) {
        status.textContent = 'Write what you want first.';
        instructions.focus();
        return;
      }
      if (!harness.value) {
        status.textContent = 'Enable a harness on the Harnesses screen first.';
        return;
      }
      this.onGenerate({ target, control, card, instructions: instructions.value, harnessId: harness.value, button: run, cancel, status });
    });
    return h('div', { class: 'generate' }, toggle, box);
  }

  /** Shows each problem at its field (the first card with one opens), and all in the summary at the top, linked to their fields. */
  showIssues(issues: readonly FieldMessage[], sent: PipelineInput): void {
    clearFieldErrors(this.element);
    this.summaryTargets.clear();
    const cards = this.orderedCards();
    const items = issues.map((issue) => {
      const container = this.containerFor(issue.field, cards, sent);
      if (!container) return h('li', {}, issue.message);
      const target = showFieldError(container, atField(container, issue.message)) ?? container;
      const item = h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => this.reveal(target) }, issue.message));
      this.summaryTargets.set(item, container);
      return item;
    });
    const first = cards.find((card) => card.element.querySelector('[data-test="field-error"]'));
    if (first) this.expand(first);
    replace(this.summary, h('strong', {}), h('ul', {}, items));
    this.countSummary();
    this.summary.hidden = false;
    this.summary.focus();
  }

  /** Drops the problems fixed at their fields from the summary, which goes when none is left. */
  private countSummary(): void {
    for (const [item, container] of this.summaryTargets) if (!container.querySelector('[data-test="field-error"]')) item.remove();
    const count = this.summary.querySelectorAll('li').length;
    this.summary.querySelector('strong')!.textContent = `Not saved: ${count} problem${count === 1 ? '' : 's'}.`;
    if (count === 0) this.summary.hidden = true;
  }

  /** Opens the card holding `target`, then focuses it. */
  reveal(target: HTMLElement): void {
    const card = this.cards.get(target.closest<HTMLElement>('.step-card')!);
    if (card) this.expand(card);
    target.focus();
  }

  /**
   * Shows each warning at its field in amber (replacing the warnings shown before); a warning
   * whose field is not on the form is left out. Warnings never mark a field invalid.
   */
  showWarnings(warnings: readonly FieldMessage[], sent: PipelineInput): void {
    clearFieldWarnings(this.element);
    const cards = this.orderedCards();
    for (const warning of warnings) {
      const container = this.containerFor(warning.field, cards, sent);
      if (container) showFieldWarning(container, warning.message);
    }
  }

  /**
   * Replaces what `container` (one field, after it lost focus) shows with the problems and
   * warnings of a check that belong to it.
   */
  showFieldCheck(container: HTMLElement, check: { problems: readonly FieldMessage[]; warnings: readonly FieldMessage[] }, sent: PipelineInput): void {
    const cards = this.orderedCards();
    const mine = (messages: readonly FieldMessage[]) => messages.filter((message) => this.containerFor(message.field, cards, sent) === container);
    clearFieldErrors(container);
    clearFieldWarnings(container);
    for (const problem of mine(check.problems)) showFieldError(container, atField(container, problem.message));
    for (const warning of mine(check.warnings)) showFieldWarning(container, warning.message);
    if (!this.summary.hidden) this.countSummary();
  }

  private containerFor(path: string, cards: StepCard[], sent: PipelineInput): HTMLElement | null {
    if (!path) return null;
    const segments = path.split('.');
    let scope: HTMLElement = this.form;
    let rest = segments;
    if (segments[0] === 'steps' && segments.length > 1) {
      const key = segments[1]!;
      const index = key.startsWith('#') ? Number(key.slice(1)) - 1 : sent.steps.findIndex((step) => step.id === key);
      const card = cards[index];
      if (!card) return null;
      scope = card.element;
      rest = segments.slice(2);
      if (rest.length === 0) return card.element.querySelector<HTMLElement>('.step-errors');
    }
    // `env.TOKEN` goes to the env rows, `variables.x` to the variables: the longest known prefix.
    for (let length = rest.length; length > 0; length -= 1) {
      const name = rest.slice(0, length).join('.');
      const found = Array.from(scope.querySelectorAll<HTMLElement>(`[data-field="${CSS.escape(name)}"]`)).find((element) =>
        scope === this.form ? !element.closest('.step-card') || name === 'steps' : true);
      if (found) return found;
    }
    return scope === this.form ? null : scope.querySelector<HTMLElement>('.step-errors');
  }

  clearIssues(): void {
    clearFieldErrors(this.element);
    this.summary.hidden = true;
  }
}

export const pipelineEditorScreen: ScreenFactory = (context: AppContext, params) => {
  const api = context.api;
  const view = new PipelineEditorView();
  const pipelineId = params.id ?? '';
  let loaded: Pipeline | undefined;
  let dirty = false;
  let saving = false;
  const pendingGenerations = new Set<string>();

  const setDirty = (value: boolean) => {
    dirty = value;
    view.dirtyNote.textContent = dirty ? 'Unsaved changes' : '';
    view.runNote.textContent = dirty ? 'Runs use the saved pipeline: save your changes first.' : '';
  };

  const find = () => context.state.snapshot?.pipelines.find((pipeline) => pipeline.id === pipelineId);

  const load = () => {
    loaded = find();
    if (!loaded) {
      replace(view.element,
        h('h1', {}, 'Pipeline not found'),
        h('div', { class: 'empty' }, h('p', {}, 'This pipeline does not exist, or it was deleted.'), h('a', { href: '#/pipelines' }, 'Back to Pipelines')));
      return;
    }
    view.render(loaded, context.state.snapshot);
    setDirty(false);
    if (takeRunPanelRequest(loaded.id)) requestAnimationFrame(() => view.showRunPanel());
    // What saving would warn about is shown from the start.
    const shown = loaded;
    api.checkPipeline(shown).then((check) => {
      if (loaded === shown && !dirty) view.showWarnings(check.warnings, shown);
    }, () => undefined);
  };

  // Any edit in the pipeline form marks it unsaved; the run panel and generation boxes do not.
  // The default harness names the agent in every agent step's overview.
  view.form.addEventListener('input', (event) => {
    if (!(event.target as HTMLElement).closest('.generate-box')) setDirty(true);
  });
  view.form.addEventListener('change', (event) => {
    if ((event.target as HTMLElement).closest('.generate-box')) return;
    setDirty(true);
    for (const card of view.cards.values()) card.refresh();
  });
  view.onStepsChanged = () => setDirty(true);

  // Step buttons, by delegation on the form.
  view.form.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    if (!button) return;
    const action = button.dataset.action;
    const card = view.cards.get(button.closest<HTMLElement>('.step-card')!);
    if (action === 'toggle' && card) return button.getAttribute('aria-expanded') === 'true' ? card.open(false) : view.expand(card);
    if (action === 'add-step') {
      const taken = new Set(view.orderedCards().map((card) => card.idInput.value.trim()));
      view.addCard(newStep(button.dataset.kind as StepKind, taken), true);
      setDirty(true);
      return;
    }
    const element = button.closest<HTMLLIElement>('.step-card');
    if (!element) return;
    if (action === 'up' && element.previousElementSibling) view.steps.insertBefore(element, element.previousElementSibling);
    else if (action === 'down' && element.nextElementSibling) view.steps.insertBefore(element.nextElementSibling, element);
    else if (action === 'remove') {
      void confirmAction({ title: `Remove the step “${card?.idInput.value || 'unnamed'}”?`, confirm: 'Remove', danger: true }).then((confirmed) => {
        if (!confirmed) return;
        const next = (element.nextElementSibling ?? element.previousElementSibling) as HTMLElement | null;
        element.remove();
        view.cards.delete(element);
        view.renumber();
        setDirty(true);
        (next?.querySelector('input') ?? view.form.querySelector<HTMLElement>('[data-action="add-step"]'))?.focus();
      });
      return;
    } else return;
    view.renumber();
    setDirty(true);
    // The moved card keeps focus on the same button, unless it is now disabled.
    const again = element.querySelector<HTMLButtonElement>(`[data-action="${action}"]`)!;
    (again.disabled ? element.querySelector<HTMLButtonElement>(`[data-action="${action === 'up' ? 'down' : 'up'}"]`)! : again).focus();
  });

  const save = async () => {
    if (saving) return;
    saving = true;
    const pipeline = view.read();
    try {
      const saved = await withBusy(view.save, 'Saving…', () => api.savePipeline(pipeline));
      loaded = saved;
      view.clearIssues();
      view.showSaved(saved);
      setDirty(false);
      view.notice.hidden = true;
      const warnings = saved.warnings ?? [];
      view.showWarnings(warnings, pipeline);
      context.toast(warnings.length === 0 ? `Saved ${saved.name}` : `Saved ${saved.name}, with ${warnings.length} warning${warnings.length === 1 ? '' : 's'} at the fields`);
    } catch (error) {
      // The check answers with each problem at its field; the warnings of the parts that are valid come with it.
      const check = await api.checkPipeline(pipeline).catch(() => undefined);
      view.showIssues(check?.problems.length ? check.problems : problemsOf(error), pipeline);
      if (check) view.showWarnings(check.warnings, pipeline);
    } finally {
      saving = false;
    }
  };
  view.save.addEventListener('click', save);

  // A field that loses focus is checked as saving would check it: its problems and warnings
  // replace what it showed. Only the latest check of each field is shown.
  // A field showing an error is checked again while it is typed in, so the error goes once it is fixed.
  const checks = new WeakMap<HTMLElement, number>();
  let checkCount = 0;
  let typingTimer: ReturnType<typeof setTimeout> | undefined;
  view.form.addEventListener('input', (event) => {
    const container = (event.target as HTMLElement).closest<HTMLElement>('[data-field]');
    if (!container?.querySelector('[data-test="field-error"]')) return;
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => void checkField(event.target as HTMLElement), 300);
  });
  view.form.addEventListener('focusout', (event) => void checkField(event.target as HTMLElement));
  async function checkField(target: HTMLElement): Promise<void> {
    const container = target.closest<HTMLElement>('[data-field]');
    if (!container || !target.matches('input, select, textarea') || target.closest('.generate-box')) return;
    const ticket = ++checkCount;
    checks.set(container, ticket);
    const pipeline = view.read();
    try {
      const check = await api.checkPipeline(pipeline);
      if (checks.get(container) === ticket && container.isConnected) view.showFieldCheck(container, check, pipeline);
    } catch {
      // A check that cannot run leaves the field as it was; saving reports the problem.
    }
  }
  view.form.addEventListener('submit', (event) => {
    event.preventDefault();
    void save();
  });
  view.form.addEventListener('keydown', (event) => {
    if (event.key === 's' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      void save();
    }
  });

  view.onGenerate = async ({ target, control, card, instructions, harnessId, button, cancel, status }) => {
    const requestId = `gen-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    const stepId = card ? view.cards.get(card)?.idInput.value.trim() : undefined;
    const model = card?.querySelector<HTMLInputElement>('[data-field="model"] input')?.value.trim() || undefined;
    pendingGenerations.add(requestId);
    cancel.hidden = false;
    const onCancel = async () => {
      try {
        await withBusy(cancel, 'Cancelling…', () => api.cancelGenerate(requestId));
      } catch (error) {
        status.textContent = `Could not cancel: ${errorText(error)}`;
      }
    };
    cancel.addEventListener('click', onCancel);
    status.classList.remove('field-error');
    status.textContent = 'The agent is writing…';
    try {
      const text = await withBusy(button, 'Generating…', () => api.generateText({
        target, instructions, harnessId, model, current: control.value || undefined, pipeline: view.read(), stepId: stepId || undefined, requestId,
      }));
      control.value = text;
      control.dispatchEvent(new Event('input', { bubbles: true }));
      status.textContent = `Filled in the ${targetLabels[target]}: review it, then save.`;
      control.focus();
    } catch (error) {
      status.textContent = `Not generated: ${errorText(error)}`;
      status.classList.add('field-error');
    } finally {
      pendingGenerations.delete(requestId);
      cancel.removeEventListener('click', onCancel);
      cancel.hidden = true;
    }
  };

  view.runForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!loaded) return;
    const title = view.runTitle.value.trim();
    const description = view.runDescription.value.trim();
    const request = { pipelineId: loaded.id, variables: view.runVariables.read(), ...(title ? { issue: { title, ...(description ? { description } : {}) } } : {}) };
    try {
      const run = await withBusy(view.runStart, 'Starting…', () => api.startRun(request));
      context.toast(`Started ${run.pipelineName}`);
      context.navigate(`#/runs/${encodeURIComponent(run.id)}`);
    } catch (error) {
      view.runNote.textContent = `Not started: ${errorText(error)}`;
    }
  });

  // Unsaved changes are a draft (drafts.ts): leaving keeps this screen as it is; closing the window asks.
  const draft = watchForm(view.form, { dirty: () => dirty });

  load();

  return {
    element: view.element,
    update() {
      const current = find();
      if (!loaded) {
        if (current) load();
        return;
      }
      if (!current) {
        view.notice.textContent = 'This pipeline was deleted elsewhere; you can still copy what you need from this page.';
        view.notice.hidden = false;
        return;
      }
      // What the run needs follows the harnesses (a detection, an install) even when the pipeline stays.
      view.snapshot = context.state.snapshot;
      view.showSaved(loaded);
      for (const card of view.cards.values()) card.refresh();
      if (current.updatedAt === loaded.updatedAt) return;
      if (!dirty && !saving) load();
      else {
        view.notice.textContent = 'This pipeline was changed elsewhere. Saving replaces that version with yours.';
        view.notice.hidden = false;
      }
    },
    dispose() {
      clearTimeout(typingTimer);
      draft.forget();
      for (const requestId of pendingGenerations) void api.cancelGenerate(requestId).catch(() => undefined);
    },
  };
};
