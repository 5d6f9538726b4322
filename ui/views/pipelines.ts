// The Pipelines screen: every pipeline grouped by project, each row with its last run's status, a
// Run button and a ⋯ menu (Duplicate, Export, Delete), and three ways to add one: from a template,
// from an exported file, or designed by an agent. The view owns the DOM; the controller below
// joins it to the API.

import type { Pipeline, PipelineTemplateId, Run, Snapshot } from '../../src/core/api';
import { errorText, statusLabel, type AppContext, type ScreenFactory } from '../app';
import { h, replace, timeElement } from '../dom';
import { deleteWithUndo, isPendingDeletion } from './pending-deletions';
import { downloadText, field, safeFileName, selectInput, textArea, withBusy } from './form';
import { missingAgents, missingAgentsNotice, noAgentNote } from './readiness';
import { glyphElement } from './runs';
import { listSearch } from './search-box';

/** Set by a row's Run button: the editor of this pipeline opens with its Run panel in focus (true once). */
let runPanelRequested: string | undefined;
/** The editor of this pipeline, opened next, shows its Run panel (the command menu's "Run …"). */
export function requestRunPanel(pipelineId: string): void {
  runPanelRequested = pipelineId;
}
export function takeRunPanelRequest(pipelineId: string): boolean {
  const requested = runPanelRequested === pipelineId;
  runPanelRequested = undefined;
  return requested;
}

/**
 * A pipeline's name as a picker shows it: when another pipeline has the same name, its project's
 * name follows ("Demo (Demo project)"), or, beside one of the same project (or `sameProject`), the
 * end of its id ("Demo · pl_…4f2").
 */
function pipelineLabel(pipeline: Pipeline, snapshot: Snapshot | undefined, sameProject = false): string {
  const twins = (snapshot?.pipelines ?? []).filter((other) => other.id !== pipeline.id && other.name === pipeline.name && (!sameProject || other.projectId === pipeline.projectId));
  if (twins.length === 0) return pipeline.name;
  const project = snapshot?.projects.find((candidate) => candidate.id === pipeline.projectId);
  return project && twins.every((other) => other.projectId !== pipeline.projectId) ? `${pipeline.name} (${project.name})` : `${pipeline.name} · pl_…${pipeline.id.slice(-3)}`;
}

/** The templates whose steps run an agent (the settings' default harness). */
const agentTemplates = new Set<PipelineTemplateId>(['feature', 'bugfix', 'review']);
const templates: [PipelineTemplateId, string][] = [
  ['demo', 'Demo (safe to try)'],
  ['feature', 'Feature: plan, build, review'],
  ['bugfix', 'Bug fix'],
  ['review', 'Review: answer review comments'],
  ['blank', 'Blank'],
];

/** `[id, label]` pairs of the enabled harnesses, noting the ones not found on this machine. */
export function harnessChoices(snapshot: Snapshot | undefined): [string, string][] {
  return (snapshot?.harnesses ?? []).filter((harness) => harness.enabled).map((harness) => {
    const status = snapshot?.harnessStatus[harness.id];
    return [harness.id, status && !status.installed ? `${harness.name} (not installed)` : harness.name];
  });
}

class PipelinesView {
  readonly element: HTMLElement;
  readonly groups = h('div', { class: 'pipeline-groups' });
  readonly empty = h('div', { class: 'empty' });
  readonly template = selectInput(templates, 'demo', { name: 'template' });
  readonly project = h('select', { name: 'project' });
  readonly create = h('button', { type: 'submit', class: 'primary' }, 'Create');
  readonly importInput = h('input', { type: 'file', accept: '.json,application/json', class: 'visually-hidden', 'aria-label': 'Import a pipeline file (.json)' });
  readonly importLabel = h('label', { class: 'button file-button' }, this.importInput, 'Import…');
  readonly generateToggle = h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': 'generate-panel' }, 'Generate with an agent');
  readonly description = textArea('', { name: 'description', rows: 3, placeholder: 'Run the tests, ask an agent to fix what fails, then wait for my approval before pushing.' });
  readonly harness = h('select', { name: 'harness' });
  readonly generate = h('button', { type: 'submit', class: 'primary' }, 'Generate');
  readonly cancelGeneration = h('button', { type: 'button', hidden: true }, 'Cancel');
  readonly generateStatus = h('p', { class: 'meta', role: 'status', 'aria-live': 'polite' });
  readonly generatePanel: HTMLFormElement;
  readonly templateForm: HTMLFormElement;
  readonly actionError = h('p', { class: 'field-error', role: 'alert', hidden: true });
  readonly readiness = h('div', { class: 'readiness-area' });

  constructor() {
    this.templateForm = h('form', { class: 'inline-form', 'aria-label': 'New from template' },
      h('span', { class: 'inline-title' }, 'New from template'),
      field('Template', this.template),
      field('Project', this.project),
      this.create);
    this.generatePanel = h('form', { class: 'panel generate-panel', id: 'generate-panel', hidden: true, 'aria-label': 'Generate a pipeline with an agent' },
      field('Describe the pipeline', this.description, { wide: true }),
      h('div', { class: 'inline-form' }, field('Harness', this.harness), this.generate, this.cancelGeneration),
      this.generateStatus);
    this.element = h('section', { class: 'page pipelines-page' },
      h('h1', {}, 'Pipelines'),
      h('div', { class: 'toolbar' }, this.templateForm, h('span', { class: 'spacer' }), this.importLabel, this.generateToggle),
      this.readiness,
      this.actionError,
      this.generatePanel,
      this.empty,
      h('div', { class: 'toolbar list-toolbar' }, listSearch({ scope: this.groups, items: '[data-test="pipeline-row"]', groups: '.pipeline-group', noun: 'pipelines', placeholder: 'Search name, project, steps' })),
      this.groups);
  }

  renderChoices(snapshot: Snapshot | undefined): void {
    const keepProject = this.project.value;
    const projects = snapshot?.projects ?? [];
    replace(this.project, projects.length ? projects.map((project) => h('option', { value: project.id }, project.name)) : h('option', { value: '' }, 'A new project (this folder)'));
    if (projects.some((project) => project.id === keepProject)) this.project.value = keepProject;
    const keepHarness = this.harness.value || snapshot?.settings.defaultHarnessId || '';
    const harnesses = harnessChoices(snapshot);
    replace(this.harness, harnesses.length ? harnesses.map(([id, label]) => h('option', { value: id }, label)) : h('option', { value: '' }, 'No harness enabled'));
    if (harnesses.some(([id]) => id === keepHarness)) this.harness.value = keepHarness;
    // Said before anything fails: the chosen template's agent, and why Generate cannot run.
    const template = this.template.value as PipelineTemplateId;
    const missing = agentTemplates.has(template) ? missingAgents({ steps: [{ kind: 'agent', id: 'agent', name: '', prompt: '' }] }, snapshot) : [];
    const noAgent = noAgentNote(snapshot, 'generate-reason');
    this.generateToggle.disabled = Boolean(noAgent);
    if (noAgent) this.generateToggle.setAttribute('aria-describedby', 'generate-reason');
    else this.generateToggle.removeAttribute('aria-describedby');
    replace(this.readiness, missingAgentsNotice(missing, `The ${templates.find(([id]) => id === template)![1].split(':')[0]} template uses`), noAgent);
  }

  renderList(snapshot: Snapshot | undefined): void {
    const pipelines = (snapshot?.pipelines ?? []).filter((pipeline) => !isPendingDeletion(pipeline.id));
    const projects = snapshot?.projects ?? [];
    this.empty.hidden = pipelines.length > 0;
    replace(this.empty,
      h('p', {}, 'No pipelines yet. Create one from the demo template to see a run end to end, import a .factory.json file, or describe one for an agent to design.'),
      h('button', { type: 'button', class: 'primary', 'data-action': 'create-demo' }, 'Create the demo pipeline'));
    const groups: { title: string; path?: string; pipelines: Pipeline[] }[] = projects.map((project) => ({ title: project.name, path: project.path, pipelines: [] }));
    const byProject = new Map(projects.map((project, index) => [project.id, groups[index]!]));
    const orphans = { title: 'Without a known project', pipelines: [] as Pipeline[] };
    for (const pipeline of pipelines) (byProject.get(pipeline.projectId) ?? orphans).pipelines.push(pipeline);
    if (orphans.pipelines.length) groups.push(orphans);
    const lastRuns = new Map<string, Run>();
    for (const run of snapshot?.runs ?? []) if ((lastRuns.get(run.pipelineId)?.createdAt ?? -1) < run.createdAt) lastRuns.set(run.pipelineId, run);
    replace(this.groups, groups.filter((group) => group.pipelines.length > 0).map((group) =>
      h('section', { class: 'pipeline-group' },
        h('h2', {}, group.title, group.path ? h('code', { class: 'meta group-path' }, group.path) : null),
        h('ul', { class: 'list' }, [...group.pipelines].sort((a, b) => a.name.localeCompare(b.name)).map((pipeline) => this.row(pipeline, lastRuns.get(pipeline.id), snapshot))))));
  }

  private row(pipeline: Pipeline, lastRun: Run | undefined, snapshot: Snapshot | undefined): HTMLElement {
    const steps = pipeline.steps.length;
    const name = pipelineLabel(pipeline, snapshot, true);
    const label = lastRun && statusLabel(lastRun.status);
    const missing = missingAgents(pipeline, snapshot).map((agent) => agent.name);
    const menu = h('div', { class: 'menu-list', role: 'menu' },
      h('button', { type: 'button', role: 'menuitem', 'data-action': 'duplicate' }, 'Duplicate'),
      h('button', { type: 'button', role: 'menuitem', 'data-action': 'export' }, 'Export…'),
      h('button', { type: 'button', role: 'menuitem', class: 'danger', 'data-action': 'delete' }, 'Delete'));
    return h('li', { class: 'pipeline-row', 'data-test': 'pipeline-row', 'data-id': pipeline.id },
      h('div', { class: 'row-main' },
        h('a', { href: `#/pipelines/${encodeURIComponent(pipeline.id)}`, class: 'row-title' }, name),
        pipeline.description ? h('span', { class: 'row-description' }, pipeline.description) : null,
        h('span', { class: 'meta' }, `${steps} step${steps === 1 ? '' : 's'} · ${pipeline.steps.map((step) => step.kind).join(' → ')} · updated `, timeElement(pipeline.updatedAt),
          missing.length ? h('span', { class: 'row-warning' }, ` · ${missing.join(', ')} not ready`) : null),
        h('p', { class: 'field-error row-error', role: 'alert', hidden: true })),
      label ? h('a', { class: `${label.className} last-run`, href: `#/runs/${encodeURIComponent(lastRun!.id)}`, 'data-test': 'last-run', title: `Last run ${new Date(lastRun!.createdAt).toLocaleString()}` }, glyphElement(label.glyph), label.text)
        : h('span', { class: 'meta last-run' }, 'Never run'),
      h('button', { type: 'button', class: 'small', 'data-action': 'run', 'aria-label': `Run ${name}` }, 'Run'),
      h('details', { class: 'menu row-menu' }, h('summary', { class: 'button small', 'aria-haspopup': 'menu', 'aria-label': `More actions for ${name}`, title: 'More actions' }, '⋯'), menu));
  }

  showActionError(message: string | undefined): void {
    this.actionError.textContent = message ?? '';
    this.actionError.hidden = !message;
  }
}

export const pipelinesScreen: ScreenFactory = (context: AppContext) => {
  const view = new PipelinesView();
  const api = context.api;
  let generating = false;

  let disposed = false;
  /** Moves to a new pipeline's editor, unless the user already went elsewhere. */
  const open = (pipeline: Pipeline) => {
    if (!disposed) context.navigate(`#/pipelines/${encodeURIComponent(pipeline.id)}`);
  };

  const render = () => {
    view.renderChoices(context.state.snapshot);
    // Re-rendering the rows keeps the focused button focused (a live update must not steal it).
    const active = document.activeElement as HTMLElement | null;
    const focusedRow = active?.closest<HTMLElement>('[data-test="pipeline-row"]')?.dataset.id;
    const focusedAction = active?.dataset.action;
    view.renderList(context.state.snapshot);
    if (focusedRow && focusedAction) {
      view.groups.querySelector<HTMLElement>(`[data-id="${CSS.escape(focusedRow)}"] [data-action="${focusedAction}"]`)?.focus();
    }
  };
  const find = (id: string | undefined) => context.state.snapshot?.pipelines.find((pipeline) => pipeline.id === id);

  async function createFromTemplate(button: HTMLButtonElement, templateId: PipelineTemplateId) {
    view.showActionError(undefined);
    try {
      const pipeline = await withBusy(button, 'Creating…', () => api.createPipelineFromTemplate(templateId, view.project.value || undefined));
      context.toast(`Created ${pipeline.name}`);
      open(pipeline);
    } catch (error) {
      view.showActionError(`Could not create the pipeline: ${errorText(error)}`);
    }
  }

  view.template.addEventListener('change', () => view.renderChoices(context.state.snapshot));
  // A row menu closes with Escape (focus back on ⋯) and when anything outside it is clicked.
  view.groups.addEventListener('keydown', (event) => {
    const menu = (event.target as HTMLElement).closest('details');
    if (event.key !== 'Escape' || !menu?.open) return;
    menu.open = false;
    menu.querySelector('summary')!.focus();
  });
  const closeMenus = (event: Event) => {
    for (const menu of view.groups.querySelectorAll('details[open]')) if (!menu.contains(event.target as Node)) menu.removeAttribute('open');
  };
  document.addEventListener('click', closeMenus);

  view.templateForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void createFromTemplate(view.create, view.template.value as PipelineTemplateId);
  });

  // Rows and the empty state: one listener for every button.
  view.element.addEventListener('click', async (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    if (!button) return;
    const action = button.dataset.action;
    if (action === 'create-demo') return createFromTemplate(button, 'demo');
    const row = button.closest<HTMLElement>('[data-test="pipeline-row"]');
    const pipeline = find(row?.dataset.id);
    if (!row || !pipeline) return;
    const rowError = row.querySelector<HTMLElement>('.row-error')!;
    rowError.hidden = true;
    row.querySelector('details')?.removeAttribute('open');
    if (action === 'run') {
      runPanelRequested = pipeline.id;
      return context.navigate(`#/pipelines/${encodeURIComponent(pipeline.id)}`);
    }
    try {
      if (action === 'duplicate') {
        const copy = await withBusy(button, 'Duplicating…', () => api.duplicatePipeline(pipeline.id));
        context.toast(`Created ${copy.name}`);
      } else if (action === 'export') {
        const json = await withBusy(button, 'Exporting…', () => api.exportPipeline(pipeline.id));
        downloadText(`${safeFileName(pipeline.name)}.factory.json`, json);
        context.toast(`Exported ${pipeline.name}`);
      } else if (action === 'delete') {
        // Undoable for a few seconds (its past runs stay either way): no question first.
        deleteWithUndo(context, [pipeline.id], `Deleted “${pipeline.name}”`, () => api.deletePipeline(pipeline.id), () => {
          const snapshot = context.state.snapshot;
          if (snapshot) snapshot.pipelines = snapshot.pipelines.filter((candidate) => candidate.id !== pipeline.id);
        });
      }
    } catch (error) {
      rowError.textContent = errorText(error);
      rowError.hidden = false;
    }
  });

  view.importInput.addEventListener('change', async () => {
    const file = view.importInput.files?.[0];
    view.importInput.value = '';
    if (!file) return;
    view.showActionError(undefined);
    view.importLabel.classList.add('busy');
    view.importLabel.lastChild!.textContent = 'Importing…';
    try {
      const pipeline = await api.importPipeline(await file.text());
      context.toast(`Imported ${pipeline.name}`);
      open(pipeline);
    } catch (error) {
      view.showActionError(`Could not import ${file.name}: ${errorText(error)}`);
    } finally {
      view.importLabel.classList.remove('busy');
      view.importLabel.lastChild!.textContent = 'Import…';
    }
  });

  view.generateToggle.addEventListener('click', () => {
    const open = view.generatePanel.hidden;
    view.generatePanel.hidden = !open;
    view.generateToggle.setAttribute('aria-expanded', String(open));
    if (open) view.description.focus();
  });
  view.generatePanel.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !generating) {
      view.generatePanel.hidden = true;
      view.generateToggle.setAttribute('aria-expanded', 'false');
      view.generateToggle.focus();
    }
  });

  view.generatePanel.addEventListener('submit', async (event) => {
    event.preventDefault();
    const description = view.description.value.trim();
    if (!description) {
      view.generateStatus.textContent = 'Describe what the pipeline should do first.';
      view.description.focus();
      return;
    }
    const noAgent = noAgentNote(context.state.snapshot)?.textContent;
    if (!view.harness.value || noAgent) {
      view.generateStatus.textContent = noAgent ?? 'Enable a harness on the Harnesses screen first.';
      return;
    }
    generating = true;
    view.cancelGeneration.hidden = false;
    view.generateStatus.textContent = 'The agent is designing the pipeline; this can take a minute.';
    try {
      const pipeline = await withBusy(view.generate, 'Generating…', () => api.generatePipeline({ description, harnessId: view.harness.value }));
      context.toast(`Generated ${pipeline.name}`);
      open(pipeline);
    } catch (error) {
      view.generateStatus.textContent = `Not generated: ${errorText(error)}`;
    } finally {
      generating = false;
      view.cancelGeneration.hidden = true;
    }
  });

  view.cancelGeneration.addEventListener('click', async () => {
    try {
      await withBusy(view.cancelGeneration, 'Cancelling…', () => api.cancelPipelineGeneration());
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  });

  render();
  return {
    element: view.element,
    update: render,
    dispose() {
      // A generation keeps going: its pipeline appears in the list when it is done.
      disposed = true;
      document.removeEventListener('click', closeMenus);
    },
  };
};
