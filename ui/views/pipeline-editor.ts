// The Pipeline editor: the pipeline's own fields (project, harness, model, runner, budget,
// variables), the list of its step cards with Add, move and remove, Save, and the hookup of its
// parts to the API and to drafts. The parts each have their file: a step card
// (pipeline-step-card.ts), the problems and warnings at their fields (pipeline-messages.ts), the
// Run panel (pipeline-run-panel.ts) and text generation beside the long texts
// (pipeline-generate.ts). The form is the working copy: structural edits move card elements, and
// `read()` turns it into a PipelineInput.

import type { GenerateTarget, Pipeline, PipelineInput, Snapshot, Step, StepKind } from '../../src/core/api';
import type { AppContext, ScreenFactory } from '../app';
import { h, replace, timeElement } from '../dom';
import { confirmAction } from './dialog';
import { watchForm } from './drafts';
import { harnessChoices, takeRunPanelRequest } from './pipelines';
import { agentOf, missingAgents, noAgentNote } from './readiness';
import { budgetFields } from './budget-fields';
import { field, keyValueEditor, problemsOf, selectInput, textArea, textInput, withBusy } from './form';
import { plainRunnerName, runnerChoices } from './runner-words';
import { kindLabels, newStep, numberInput, optional, readNumber, stepCard, type GenerateHost, type StepCard } from './pipeline-step-card';
import { PipelineMessages } from './pipeline-messages';
import { RunPanel } from './pipeline-run-panel';
import { generateBox, generationRunner, type GenerateRequest } from './pipeline-generate';

class PipelineEditorView implements GenerateHost {
  readonly element = h('section', { class: 'page pipeline-editor' });
  readonly notice = h('p', { class: 'notice', role: 'status', hidden: true });
  readonly dirtyNote = h('span', { class: 'meta dirty-note', role: 'status' });
  readonly save = h('button', { type: 'button', class: 'primary', 'data-test': 'save-pipeline' }, 'Save');
  readonly form = h('form', { class: 'editor-form', novalidate: true });
  readonly steps = h('ol', { class: 'step-list', 'aria-label': 'Steps' });
  readonly cards = new Map<HTMLElement, StepCard>();
  readonly run = new RunPanel();
  readonly messages = new PipelineMessages(this);
  readonly heading = h('h1', {});
  readonly crumb = h('span', {});
  readonly updated = h('span', { class: 'meta' });
  /** On a phone, where the Run panel is far below, brings it into view. */
  readonly runJump = h('button', { type: 'button', class: 'run-jump', onclick: () => this.run.show() }, 'Run');
  private readDefaultHarness: () => string = () => '';
  private readVariables: () => Record<string, string> = () => ({});
  private readGeneral: () => Omit<PipelineInput, 'steps' | 'variables'> = () => ({ projectId: '', name: '' });
  onStepsChanged: () => void = () => undefined;
  /** Set by the controller: runs a generation for a box. */
  onGenerate: (request: GenerateRequest) => void = () => undefined;
  snapshot: Snapshot | undefined;

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

    this.run.render(pipeline);
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
      this.messages.summary,
      h('div', { class: 'editor-columns' }, this.form, this.run.form));
  }

  /** The name, the time and what the run needs, as saved: the heading and breadcrumb follow a rename. */
  showSaved(pipeline: Pipeline): void {
    this.heading.textContent = pipeline.name;
    this.crumb.textContent = pipeline.name;
    replace(this.updated, 'updated ', timeElement(pipeline.updatedAt));
    this.run.showReadiness(pipeline, this.snapshot);
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
    return generateBox(this, target, control, card);
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
    view.run.note.textContent = dirty ? 'Runs use the saved pipeline: save your changes first.' : '';
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
    if (takeRunPanelRequest(loaded.id)) requestAnimationFrame(() => view.run.show());
    // What saving would warn about is shown from the start.
    const shown = loaded;
    api.checkPipeline(shown).then((check) => {
      if (loaded === shown && !dirty) view.messages.showWarnings(check.warnings, shown);
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
      view.messages.clearIssues();
      view.showSaved(saved);
      setDirty(false);
      view.notice.hidden = true;
      const warnings = saved.warnings ?? [];
      view.messages.showWarnings(warnings, pipeline);
      context.toast(warnings.length === 0 ? `Saved ${saved.name}` : `Saved ${saved.name}, with ${warnings.length} warning${warnings.length === 1 ? '' : 's'} at the fields`);
    } catch (error) {
      // The check answers with each problem at its field; the warnings of the parts that are valid come with it.
      const check = await api.checkPipeline(pipeline).catch(() => undefined);
      view.messages.showIssues(check?.problems.length ? check.problems : problemsOf(error), pipeline);
      if (check) view.messages.showWarnings(check.warnings, pipeline);
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
      if (checks.get(container) === ticket && container.isConnected) view.messages.showFieldCheck(container, check, pipeline);
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

  view.onGenerate = generationRunner(context, view, pendingGenerations);

  view.run.startRuns(context, () => loaded);

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