// The Runs screen: every run, newest first, live from the snapshot, with where it came from and
// the step it is at; filters (`#/runs?status=waiting` opens with one); a form to start one.
//
// View: `RunsView` owns the DOM (toolbar, start form, list) and reports what the user did.
// Controller: `runsScreen` joins it to the state and the API.

import type { Pipeline, Run, RunStatus, StepRun } from '../../src/core/api';
import { errorText, statusLabel, type AppContext, type ScreenFactory } from '../app';
import { duration, h, replace, timeElement } from '../dom';
import { gettingStarted } from './checklist';
import { confirmAction } from './dialog';
import { pullRequestChip } from './pull-request';
import { livenessElement, tickLiveness, usageParts } from './liveness';
import { missingAgents, missingAgentsNotice } from './readiness';

const runStatuses: readonly RunStatus[] = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'rejected'];

interface RunFilters {
  status: string;
  pipelineId: string;
  search: string;
}

/**
 * The pipeline and the search are kept while the app runs, so coming back to Runs keeps them; the
 * status lives only in the address (`#/runs?status=waiting`, as the top bar's count links), so a
 * filter picked there does not stick on later visits.
 */
const remembered: RunFilters = { status: '', pipelineId: '', search: '' };

/** The status the address asks for ('' for all). */
function addressStatus(): string {
  const status = new URLSearchParams(location.hash.split('?')[1] ?? '').get('status') ?? '';
  return runStatuses.includes(status as RunStatus) ? status : '';
}

/** Waiting runs first (they wait for someone), then newest first. */
function pinWaiting(runs: Run[]): Run[] {
  return runs.sort((a, b) => Number(b.status === 'waiting') - Number(a.status === 'waiting') || b.createdAt - a.createdAt);
}

/** A status glyph drawn by CSS, so the element's text stays the status word alone. */
export function glyphElement(glyph: string): HTMLElement {
  return h('span', { class: 'glyph', 'data-glyph': glyph, 'aria-hidden': 'true' });
}

export function statusPill(status: string, attributes: Record<string, string> = {}): HTMLElement {
  const label = statusLabel(status);
  return h('span', { class: label.className, title: label.text, ...attributes }, glyphElement(label.glyph), label.text);
}

/** The title a run is known by: its issue's title, else its pipeline's name. */
export function runTitle(run: Run): string {
  return run.issue?.title || run.pipelineName;
}

/** Where a run is: "2/3 · Choose" (the step running or waiting, else the one that failed), "3/3" when done. */
function runProgress(run: Run): string {
  const at = (statuses: string[]) => run.steps.findIndex((step) => statuses.includes(step.status));
  const index = at(['running', 'waiting']) >= 0 ? at(['running', 'waiting']) : at(['failed', 'rejected', 'cancelled']);
  if (index >= 0) return `${index + 1}/${run.steps.length} · ${run.steps[index]!.name}`;
  const done = run.steps.filter((step) => step.status === 'succeeded' || step.status === 'skipped').length;
  return done ? `${done}/${run.steps.length}` : '';
}

/** How long a step took, or has been running. */
export function stepTime(run: Run, step: StepRun, now = Date.now()): number {
  return step.startedAt ? (step.finishedAt ?? run.finishedAt ?? now) - step.startedAt : 0;
}

/** The steps' times added up: a retried run does not count the idle time before its retry. */
export function runTime(run: Run, now = Date.now()): number {
  return run.steps.reduce((sum, step) => sum + stepTime(run, step, now), 0);
}

/** How long a run took, or has been running, as the run page says it. */
function runDuration(run: Run, now = Date.now()): string {
  return run.startedAt ? duration(runTime(run, now)) : '';
}

function matches(run: Run, filters: RunFilters): boolean {
  if (filters.status && run.status !== filters.status) return false;
  if (filters.pipelineId && run.pipelineId !== filters.pipelineId) return false;
  const query = filters.search.trim().toLowerCase();
  if (!query) return true;
  return [run.issue?.title, run.issue?.key, run.pipelineName].some((text) => text?.toLowerCase().includes(query));
}

class RunsView {
  readonly element: HTMLElement;
  readonly statusSelect = h('select', { 'aria-label': 'Status', 'data-test': 'filter-status' });
  readonly pipelineSelect = h('select', { 'aria-label': 'Pipeline', 'data-test': 'filter-pipeline' });
  readonly searchInput = h('input', { type: 'search', placeholder: 'Search title, key, pipeline', title: 'Search runs (press / to jump here)', 'aria-label': 'Search runs', 'data-test': 'search' });
  readonly counts = h('p', { class: 'run-counts meta' });
  readonly startPipeline = h('select', { id: 'start-pipeline', 'data-test': 'start-pipeline' });
  readonly startTitle = h('input', { id: 'start-title', type: 'text', placeholder: 'What should this run work on?', autocomplete: 'off', 'data-test': 'start-title', 'aria-describedby': 'start-title-error' });
  readonly startError = h('p', { class: 'field-error', id: 'start-title-error', role: 'alert' });
  readonly startButton = h('button', { type: 'submit', class: 'primary', 'data-test': 'start-run' }, 'Start run');
  /** Which agents the chosen pipeline needs that cannot run here, said before it starts. */
  readonly readiness = h('div', { class: 'start-readiness' });
  readonly startForm: HTMLFormElement;
  readonly list = h('ul', { class: 'list run-list', 'aria-label': 'Runs' });
  readonly empty = h('div', { class: 'empty', hidden: true });
  private readonly rows = new Map<string, { element: HTMLElement; durationElement: HTMLElement; signature: string }>();
  /** What each select was last built from, so an open select is not rebuilt under the pointer. */
  private readonly built = new Map<HTMLElement, string>();

  /** Replaces the options of `select` only when they changed. */
  private setOptions(select: HTMLSelectElement, options: [value: string, text: string][], value: string): void {
    const key = JSON.stringify(options);
    if (this.built.get(select) !== key) {
      this.built.set(select, key);
      replace(select, options.map(([optionValue, text]) => h('option', { value: optionValue }, text)));
    }
    if (select.value !== value) select.value = value;
  }

  constructor() {
    this.startForm = h('form', { class: 'panel start-run', 'aria-label': 'Start a run', novalidate: true },
      h('label', { class: 'start-field' }, h('span', {}, 'Pipeline'), this.startPipeline),
      h('label', { class: 'start-field start-title' }, h('span', {}, 'Issue title'), this.startTitle, this.startError),
      this.startButton,
      this.readiness);
    this.element = h('section', { class: 'page runs-page' },
      h('h1', {}, 'Runs'),
      this.startForm,
      h('div', { class: 'toolbar' }, this.statusSelect, this.pipelineSelect, this.searchInput, h('span', { class: 'spacer' }), this.counts),
      this.list,
      this.empty);
  }

  renderFilters(runs: Run[], pipelines: Pipeline[], filters: RunFilters): void {
    const counts = new Map<string, number>();
    for (const run of runs) counts.set(run.status, (counts.get(run.status) ?? 0) + 1);
    this.setOptions(this.statusSelect, [
      ['', `All statuses (${runs.length})`],
      ...runStatuses.map((status): [string, string] => [status, `${statusLabel(status).glyph} ${status} (${counts.get(status) ?? 0})`]),
    ], filters.status);

    const names = new Map<string, string>();
    for (const pipeline of pipelines) names.set(pipeline.id, pipeline.name);
    for (const run of runs) if (!names.has(run.pipelineId)) names.set(run.pipelineId, run.pipelineName);
    this.setOptions(this.pipelineSelect, [['', 'All pipelines'], ...names], names.has(filters.pipelineId) ? filters.pipelineId : '');
    if (document.activeElement !== this.searchInput) this.searchInput.value = filters.search;

    // Each count filters to its runs (again: all runs).
    replace(this.counts, runStatuses.filter((status) => counts.get(status)).map((status) =>
      h('button', { type: 'button', class: `count link-button ${statusLabel(status).className}`, 'data-status': status, 'aria-pressed': String(filters.status === status), title: `Show the ${status} runs` },
        glyphElement(statusLabel(status).glyph), `${counts.get(status)} ${status}`)));
  }

  renderStartForm(pipelines: Pipeline[]): void {
    const selected = this.startPipeline.value;
    const options: [string, string][] = pipelines.length === 0 ? [['', 'No pipelines yet']] : pipelines.map((pipeline) => [pipeline.id, pipeline.name]);
    this.setOptions(this.startPipeline, options, options.some(([id]) => id === selected) ? selected : options[0]![0]);
    this.startPipeline.disabled = pipelines.length === 0;
  }

  /** Keyed render: a row is rebuilt only when its run changed; order follows `runs`. */
  renderList(runs: Run[], sources: (run: Run) => string): void {
    const now = Date.now();
    const seen = new Set<string>();
    let previous: Element | null = null;
    for (const run of runs) {
      seen.add(run.id);
      const source = sources(run);
      const pullRequest = pullRequestChip(run, runs);
      const signature = `${run.status}|${runTitle(run)}|${run.issue?.key ?? ''}|${run.startedAt ?? ''}|${run.finishedAt ?? ''}|${runProgress(run)}|${source}|${pullRequest?.textContent ?? ''}|${usageParts(run.usage).join(' ')}|${run.steps.map((step) => `${step.liveness ?? ''}${step.livenessSince ?? ''}${step.resumeAt ?? ''}`).join(',')}`;
      let row = this.rows.get(run.id);
      if (!row || row.signature !== signature) {
        const durationElement = h('span', { class: 'run-row-duration meta' });
        const element = this.rowElement(run, source, durationElement, pullRequest);
        const hadFocus = row?.element.contains(document.activeElement) ?? false;
        row?.element.replaceWith(element);
        if (hadFocus) element.querySelector('a')?.focus();
        row = { element, durationElement, signature };
        this.rows.set(run.id, row);
      }
      const runTime = runDuration(run, now);
      if (row.durationElement.textContent !== runTime) row.durationElement.textContent = runTime;
      tickLiveness(row.element, now);
      const expected: Element | null = previous ? previous.nextElementSibling : this.list.firstElementChild;
      if (expected !== row.element) this.list.insertBefore(row.element, expected);
      previous = row.element;
    }
    for (const [id, row] of this.rows) {
      if (seen.has(id)) continue;
      row.element.remove();
      this.rows.delete(id);
    }
  }

  private rowElement(run: Run, source: string, durationElement: HTMLElement, pullRequest: HTMLElement | null): HTMLElement {
    const progress = runProgress(run);
    // The step running or waiting: how it is doing ("quiet for 4 min", "rate limited, resumes 14:05").
    const live = run.steps.find((step) => step.liveness && (step.status === 'running' || step.status === 'waiting'));
    const cost = usageParts(run.usage).join(' · ');
    return h('li', { class: run.status === 'waiting' ? 'run-item run-item-pinned' : 'run-item' },
      h('a', { class: 'run-row', href: `#/runs/${encodeURIComponent(run.id)}`, 'data-test': 'run-row', 'data-run-id': run.id },
        statusPill(run.status),
        // The title, and under it the step, how it is doing and what it used: the title gets the row's width.
        h('span', { class: 'run-row-main' },
          h('span', { class: 'run-row-title' }, run.issue?.key ? h('span', { class: 'run-row-key meta' }, run.issue.key) : null, runTitle(run), pullRequest),
          h('span', { class: 'run-row-sub meta' },
            h('span', { class: 'run-row-step', 'data-test': 'run-step', title: progress }, progress, live ? [' · ', livenessElement(live)] : null),
            h('span', { class: 'run-row-usage', 'data-test': 'run-usage', title: cost ? 'What its agents used' : '' }, cost))),
        // Pipeline over source on a desktop, one line on a phone.
        h('span', { class: 'run-row-facts meta' },
          h('span', { class: 'run-row-pipeline', title: run.pipelineName }, run.pipelineName),
          h('span', { class: 'run-row-source', 'data-test': 'run-source', title: `Started ${run.triggerId ? `by the trigger ${source}` : 'by hand'}` }, source)),
        h('span', { class: 'run-row-started meta' }, timeElement(run.startedAt ?? run.createdAt)),
        durationElement));
  }

  showEmpty(kind: 'none' | 'filtered' | 'hidden', onStartDemo: (button: HTMLButtonElement) => void, onClear: () => void): void {
    this.list.hidden = kind !== 'hidden';
    this.empty.hidden = kind === 'hidden';
    if (kind === 'none') {
      const button: HTMLButtonElement = h('button', { type: 'button', class: 'primary', 'data-test': 'start-demo', onclick: () => onStartDemo(button) }, 'Start the demo pipeline');
      replace(this.empty, h('p', {}, 'No runs yet. Start the demo pipeline to see how a run works, or start any pipeline above.'), button);
    } else if (kind === 'filtered') {
      replace(this.empty, h('p', {}, 'No runs match these filters.'), h('button', { type: 'button', onclick: onClear }, 'Clear filters'));
    }
  }
}

export const runsScreen: ScreenFactory = (context: AppContext) => {
  const view = new RunsView();
  // Getting started (checklist.ts), under the heading until it is dismissed or done.
  const checklist = gettingStarted(context);
  view.element.firstElementChild!.after(checklist.element);
  const filters = remembered;
  filters.status = addressStatus();
  /** A status picked on the page goes into the address (and only there). */
  const setStatus = (status: string) => {
    filters.status = status;
    history.replaceState(null, '', status ? `#/runs?status=${status}` : '#/runs');
  };
  let emptyKind: 'none' | 'filtered' | 'hidden' | undefined;

  function render(): void {
    const snapshot = context.state.snapshot;
    const runs = pinWaiting([...(snapshot?.runs ?? [])]);
    const pipelines = snapshot?.pipelines ?? [];
    view.renderFilters(runs, pipelines, filters);
    view.renderStartForm(pipelines);
    // Rebuilt only when it changes: it is a status region.
    const missing = missingFor(view.startPipeline.value);
    if (JSON.stringify(missing) !== view.readiness.dataset.key) replace(view.readiness, missingAgentsNotice(missing));
    view.readiness.dataset.key = JSON.stringify(missing);
    const shown = runs.filter((run) => matches(run, filters));
    const triggerNames = new Map(snapshot?.triggers.map((trigger) => [trigger.id, trigger.name]));
    view.renderList(shown, (run) => (run.triggerId ? triggerNames.get(run.triggerId) ?? 'deleted trigger' : 'manual'));
    const kind = runs.length === 0 ? 'none' : shown.length === 0 ? 'filtered' : 'hidden';
    if (kind !== emptyKind) {
      emptyKind = kind;
      view.showEmpty(kind, startDemo, clearFilters);
    }
  }

  function missingFor(pipelineId: string) {
    const pipeline = context.state.snapshot?.pipelines.find((candidate) => candidate.id === pipelineId);
    return pipeline ? missingAgents(pipeline, context.state.snapshot) : [];
  }

  async function start(pipelineId: string, title: string, button: HTMLButtonElement): Promise<void> {
    const missing = missingFor(pipelineId);
    const steps = missing.flatMap((agent) => agent.steps.map((name) => `“${name}”`)).join(', ');
    if (missing.length && !await confirmAction({ title: 'Start without the agents it needs?', confirm: 'Start anyway',
      body: `${missing.map((agent) => agent.name).join(' and ')} cannot run here, so the run will fail at ${steps}.` })) return;
    button.disabled = true;
    const label = button.textContent;
    button.textContent = 'Starting…';
    try {
      const run = await context.api.startRun({ pipelineId, issue: { title } });
      context.toast(`Started “${title}”`);
      context.navigate(`#/runs/${encodeURIComponent(run.id)}`);
    } catch (error) {
      context.toast(`Could not start the run: ${errorText(error)}`, 'error');
    } finally {
      button.disabled = false;
      button.textContent = label;
    }
  }

  function startDemo(button: HTMLButtonElement): void {
    const demo = context.state.snapshot?.pipelines.find((pipeline) => pipeline.name === 'Demo');
    if (!demo) {
      context.toast('There is no pipeline named Demo. Create one from the Demo template in Pipelines.', 'error');
      return;
    }
    void start(demo.id, 'Try Factory', button);
  }

  function clearFilters(): void {
    setStatus('');
    filters.pipelineId = '';
    filters.search = '';
    view.searchInput.value = '';
    render();
  }

  view.startForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const title = view.startTitle.value.trim();
    const pipelineId = view.startPipeline.value;
    const problem = !pipelineId ? 'Create a pipeline first (Pipelines).' : !title ? 'Give the run an issue title.' : '';
    view.startError.textContent = problem;
    view.startTitle.setAttribute('aria-invalid', String(Boolean(problem) && !title));
    if (problem) {
      view.startTitle.focus();
      return;
    }
    void start(pipelineId, title, view.startButton);
  });
  view.startTitle.addEventListener('input', () => {
    view.startError.textContent = '';
    view.startTitle.removeAttribute('aria-invalid');
  });
  view.startPipeline.addEventListener('change', render);
  view.statusSelect.addEventListener('change', () => {
    setStatus(view.statusSelect.value);
    render();
  });
  view.counts.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLElement>('[data-status]');
    if (!button) return;
    setStatus(filters.status === button.dataset.status ? '' : button.dataset.status!);
    render();
  });
  view.pipelineSelect.addEventListener('change', () => {
    filters.pipelineId = view.pipelineSelect.value;
    render();
  });
  view.searchInput.addEventListener('input', () => {
    filters.search = view.searchInput.value;
    render();
  });
  view.searchInput.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && view.searchInput.value) {
      view.searchInput.value = '';
      filters.search = '';
      render();
    }
  });

  // Durations of running runs keep moving.
  const timer = setInterval(() => {
    if (context.state.snapshot?.runs.some((run) => !run.finishedAt && run.startedAt)) render();
  }, 1000);

  render();
  return {
    element: view.element,
    update() {
      render();
      checklist.update();
    },
    dispose() {
      clearInterval(timer);
    },
  };
};
