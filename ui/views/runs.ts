// The Runs screen: every run, newest first, live from the snapshot; filters; a form to start one.
//
// View: `RunsView` owns the DOM (toolbar, start form, list) and reports what the user did.
// Controller: `runsScreen` joins it to the state and the API.

import type { Pipeline, Run, RunStatus } from '../../src/core/api';
import { errorText, statusLabel, type AppContext, type ScreenFactory } from '../app';
import { duration, h, replace, timeElement } from '../dom';
import { glyphElement } from './log-view';

const runStatuses: readonly RunStatus[] = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'rejected'];

interface RunFilters {
  status: string;
  pipelineId: string;
  search: string;
}

/** Kept while the app runs, so coming back to Runs keeps the filters. */
const remembered: RunFilters = { status: '', pipelineId: '', search: '' };

export function statusPill(status: string, attributes: Record<string, string> = {}): HTMLElement {
  const label = statusLabel(status);
  return h('span', { class: label.className, title: label.text, ...attributes }, glyphElement(label.glyph), label.text);
}

/** The title a run is known by: its issue's title, else its pipeline's name. */
export function runTitle(run: Run): string {
  return run.issue?.title || run.pipelineName;
}

/** How long a run took, or has been running. */
export function runDuration(run: Run, now = Date.now()): string {
  if (!run.startedAt) return '';
  return duration((run.finishedAt ?? now) - run.startedAt);
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
  readonly searchInput = h('input', { type: 'search', placeholder: 'Search title, key, pipeline  ( / )', 'aria-label': 'Search runs', 'data-test': 'search' });
  readonly counts = h('p', { class: 'run-counts meta', 'aria-live': 'polite' });
  readonly startPipeline = h('select', { id: 'start-pipeline', 'data-test': 'start-pipeline' });
  readonly startTitle = h('input', { id: 'start-title', type: 'text', placeholder: 'What should this run work on?', autocomplete: 'off', 'data-test': 'start-title', 'aria-describedby': 'start-title-error' });
  readonly startError = h('p', { class: 'field-error', id: 'start-title-error', role: 'alert' });
  readonly startButton = h('button', { type: 'submit', class: 'primary', 'data-test': 'start-run' }, 'Start run');
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
      this.startButton);
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

    replace(this.counts, runStatuses.filter((status) => counts.get(status)).map((status) =>
      h('span', { class: `count ${statusLabel(status).className}` }, glyphElement(statusLabel(status).glyph), `${counts.get(status)} ${status}`)));
  }

  renderStartForm(pipelines: Pipeline[]): void {
    const selected = this.startPipeline.value;
    const options: [string, string][] = pipelines.length === 0 ? [['', 'No pipelines yet']] : pipelines.map((pipeline) => [pipeline.id, pipeline.name]);
    this.setOptions(this.startPipeline, options, options.some(([id]) => id === selected) ? selected : options[0]![0]);
    this.startPipeline.disabled = pipelines.length === 0;
  }

  /** Keyed render: a row is rebuilt only when its run changed; order follows `runs`. */
  renderList(runs: Run[]): void {
    const now = Date.now();
    const seen = new Set<string>();
    let previous: Element | null = null;
    for (const run of runs) {
      seen.add(run.id);
      const signature = `${run.status}|${runTitle(run)}|${run.issue?.key ?? ''}|${run.startedAt ?? ''}|${run.finishedAt ?? ''}`;
      let row = this.rows.get(run.id);
      if (!row || row.signature !== signature) {
        const durationElement = h('span', { class: 'run-row-duration meta' });
        const element = this.rowElement(run, durationElement);
        const hadFocus = row?.element.contains(document.activeElement) ?? false;
        row?.element.replaceWith(element);
        if (hadFocus) element.querySelector('a')?.focus();
        row = { element, durationElement, signature };
        this.rows.set(run.id, row);
      }
      const runTime = runDuration(run, now);
      if (row.durationElement.textContent !== runTime) row.durationElement.textContent = runTime;
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

  private rowElement(run: Run, durationElement: HTMLElement): HTMLElement {
    return h('li', { class: 'run-item' },
      h('a', { class: 'run-row', href: `#/runs/${encodeURIComponent(run.id)}`, 'data-test': 'run-row', 'data-run-id': run.id },
        statusPill(run.status),
        h('span', { class: 'run-row-title' }, runTitle(run)),
        h('span', { class: 'run-row-key meta' }, run.issue?.key ?? ''),
        h('span', { class: 'run-row-pipeline meta' }, run.pipelineName),
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
  const filters = remembered;
  let emptyKind: 'none' | 'filtered' | 'hidden' | undefined;

  function render(): void {
    const snapshot = context.state.snapshot;
    const runs = [...(snapshot?.runs ?? [])].sort((a, b) => b.createdAt - a.createdAt);
    const pipelines = snapshot?.pipelines ?? [];
    view.renderFilters(runs, pipelines, filters);
    view.renderStartForm(pipelines);
    const shown = runs.filter((run) => matches(run, filters));
    view.renderList(shown);
    const kind = runs.length === 0 ? 'none' : shown.length === 0 ? 'filtered' : 'hidden';
    if (kind !== emptyKind) {
      emptyKind = kind;
      view.showEmpty(kind, startDemo, clearFilters);
    }
  }

  async function start(pipelineId: string, title: string, button: HTMLButtonElement): Promise<void> {
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
    filters.status = '';
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
    void start(pipelineId, title, view.startButton).then(() => {
      if (view.element.isConnected) view.startTitle.value = '';
    });
  });
  view.startTitle.addEventListener('input', () => {
    view.startError.textContent = '';
    view.startTitle.removeAttribute('aria-invalid');
  });
  view.statusSelect.addEventListener('change', () => {
    filters.status = view.statusSelect.value;
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

  // `/` focuses the search, unless the user is typing somewhere.
  const onKey = (event: KeyboardEvent): void => {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target as HTMLElement | null;
    if (target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))) return;
    event.preventDefault();
    view.searchInput.focus();
  };
  document.addEventListener('keydown', onKey);

  // Durations of running runs keep moving.
  const timer = setInterval(() => {
    if (context.state.snapshot?.runs.some((run) => !run.finishedAt && run.startedAt)) render();
  }, 1000);

  render();
  return {
    element: view.element,
    update: render,
    dispose() {
      document.removeEventListener('keydown', onKey);
      clearInterval(timer);
    },
  };
};
