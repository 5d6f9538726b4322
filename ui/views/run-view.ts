// The run page's view (run.ts is its controller): it builds the page's DOM, and draws the run's
// header (its facts and, once, why it ended badly) and its steps as a timeline with the setup log
// first. The step pane's notes are run-notices.ts's, the cards run-cards.ts's, the log log-view.ts's.

import type { Run } from '../../src/core/api';
import { statusLabel } from '../app';
import { duration, h, replace, timeElement } from '../dom';
import { causeLink } from './failure-cause';
import { livenessElement, usageParts } from './liveness';
import { LogView, type LogViewOptions } from './log-view';
import type { OpenLine } from './run-notices';
import { runProblem, setupStepId } from './run-problem';
import { glyphElement, runTime, runTitle, statusPill, stepTime } from './runs';

/** A duration; `live` ones tick (data-started) in the screen's ticker. */
function durationElement(elapsed: number, live: boolean): HTMLElement {
  return h('span', live ? { class: 'live-duration', 'data-started': Date.now() - elapsed } : {}, duration(elapsed));
}

export class RunView {
  readonly element: HTMLElement;
  readonly title = h('h1', { class: 'run-title', 'data-test': 'run-title' });
  readonly meta = h('div', { class: 'run-meta' });
  readonly actions = h('div', { class: 'run-actions', role: 'group', 'aria-label': 'Run actions' });
  readonly runError = h('p', { class: 'run-error', role: 'alert', 'data-test': 'run-error', hidden: true });
  /** The pull request the run opened or follows up, and its follow-ups (pull-request.ts). */
  readonly pullRequest = h('div', { class: 'run-pr-host' });
  readonly timeline = h('ol', { class: 'timeline', 'aria-label': 'Steps' });
  readonly paneTitle = h('h2', { class: 'pane-title' });
  readonly attemptSelect = h('select', { 'aria-label': 'Attempt', 'data-test': 'attempt' });
  readonly followBox = h('input', { type: 'checkbox', checked: true, 'data-test': 'follow' });
  readonly wrapBox = h('input', { type: 'checkbox', 'data-test': 'wrap' });
  readonly timesBox = h('input', { type: 'checkbox', 'data-test': 'times' });
  /** "Download log" (remote access) or "Show log file" (desktop). */
  readonly logFile: HTMLAnchorElement | HTMLButtonElement;
  readonly logToolbar: HTMLElement;
  readonly notices = h('div', { class: 'pane-notices' });
  readonly approvalHost = h('div', { class: 'approval-host' });
  readonly logView: LogView;
  readonly body: HTMLElement;
  /** Shows line `n` of a step attempt's log (a failure's cause), set by the controller. */
  openLine: OpenLine = () => undefined;

  constructor(logOptions: LogViewOptions, web: boolean, showLogFile: () => void) {
    this.logView = new LogView(logOptions);
    this.logFile = web ? h('a', { class: 'button', download: '', 'data-test': 'log-download' }, 'Download log')
      : h('button', { type: 'button', 'data-test': 'log-file', onclick: showLogFile }, 'Show log file');
    this.logToolbar = h('div', { class: 'toolbar log-toolbar' },
      h('label', { class: 'log-check' }, this.followBox, 'Follow'),
      h('label', { class: 'log-check' }, this.wrapBox, 'Wrap lines'),
      h('label', { class: 'log-check' }, this.timesBox, 'Times'),
      this.logView.searchControls,
      this.logFile);
    const header = h('header', { class: 'run-header' },
      h('div', { class: 'run-heading' }, h('a', { href: '#/runs', class: 'back meta' }, '← Runs'), this.title, this.meta, this.pullRequest),
      this.actions);
    this.body = h('div', { class: 'run-body' },
      h('nav', { class: 'run-steps', 'aria-label': 'Steps of this run' }, this.timeline),
      h('section', { class: 'run-pane', 'aria-labelledby': 'pane-title' }, h('div', { class: 'pane-head' }, this.paneTitle, this.attemptSelect), this.notices, this.logToolbar, this.logView.element));
    this.paneTitle.id = 'pane-title';
    this.element = h('section', { class: 'page run-page' }, header, this.runError, this.approvalHost, this.body);
  }

  /** `showStep` selects a step (the one a problem is about). */
  renderHeader(run: Run, link: (url: string | undefined, text: string) => HTMLElement, showStep: (stepId: string) => void, runnerName?: string): void {
    this.title.textContent = runTitle(run);
    const issue = run.issue;
    const key = issue?.key || /^https?:\/\//i.test(issue?.url ?? '') ? link(issue!.url, issue!.key || 'Issue') : null;
    const elapsed = runTime(run);
    const live = !run.finishedAt && run.steps.some((step) => step.startedAt && !step.finishedAt);
    replace(this.meta,
      statusPill(run.status, { 'data-test': 'run-status' }),
      key,
      h('a', { href: `#/pipelines/${encodeURIComponent(run.pipelineId)}`, class: 'meta' }, run.pipelineName),
      h('span', { class: 'meta' }, 'Started ', timeElement(run.startedAt ?? run.createdAt)),
      run.startedAt ? h('span', { class: 'meta', 'data-test': 'run-duration', title: 'The time its steps took' }, 'Duration ', durationElement(elapsed, live)) : null,
      run.usage ? h('span', { class: 'meta', 'data-test': 'run-usage', title: 'Every step together' }, `Used ${usageParts(run.usage).join(' · ')}`) : null,
      run.runnerId ? h('span', { class: 'meta', 'data-test': 'run-runner', title: 'Where its steps ran (Settings → Runners)' }, `On ${runnerName ?? run.runnerId}`) : null,
      run.branch && !run.workspace ? h('span', { class: 'meta run-branch', 'data-test': 'run-branch' }, 'Its worktree was removed; its work is on branch ', h('code', {}, run.branch), ': a retry makes the worktree again from it.') : null);
    const problem = runProblem(run);
    this.runError.hidden = !problem;
    this.runError.className = `run-error status-${run.status}`;
    const failedStep = problem?.stepId ? run.steps.find((step) => step.id === problem.stepId) : undefined;
    const cause = failedStep ? causeLink(run.id, failedStep, this.openLine) : null;
    replace(this.runError, problem?.text, problem?.link ? [' ', h('a', { href: problem.link[0] }, problem.link[1])] : null,
      problem?.stepId !== undefined && !cause ? [' ', h('button', { type: 'button', onclick: () => showStep(problem.stepId!) }, problem.stepId ? 'Show its log' : 'Show the setup log')] : null,
      cause);
  }

  renderTimeline(run: Run, selectedStepId: string): void {
    const focusedId = (document.activeElement as HTMLElement | null)?.closest?.('.timeline button')?.getAttribute('data-step-id');
    const setupItem = h('li', { class: 'timeline-item timeline-setup' },
      h('button', { type: 'button', class: 'step-button', 'data-step-id': setupStepId, 'data-test': 'setup-log', ...(selectedStepId === setupStepId ? { 'aria-current': 'step' } : {}) },
        h('span', { class: 'step-glyph', 'aria-hidden': 'true' }, '≡'),
        h('span', { class: 'step-text' }, h('span', { class: 'step-name' }, 'Setup log'), h('span', { class: 'meta' }, 'workspace and setup command'))));
    const items = run.steps.map((step) => {
      const label = statusLabel(step.status);
      const details: (string | HTMLElement | null)[] = [label.text];
      if (step.attempt > 1) details.push(`attempt ${step.attempt}`);
      details.push(step.startedAt ? durationElement(stepTime(run, step), !step.finishedAt && !run.finishedAt) : null);
      details.push(livenessElement(step));
      details.push(...usageParts(step.usage));
      const meta = h('span', { class: 'meta step-meta' });
      details.filter((part) => part !== null && part !== '').forEach((part, index) => {
        if (index > 0) meta.appendChild(document.createTextNode(' · '));
        meta.appendChild(typeof part === 'string' ? document.createTextNode(part) : part!);
      });
      return h('li', { class: `timeline-item step-${step.status}` },
        h('button', { type: 'button', class: 'step-button', 'data-step-id': step.id, 'data-test': 'step', ...(selectedStepId === step.id ? { 'aria-current': 'step' } : {}) },
          h('span', { class: `step-glyph ${label.className}`, 'aria-hidden': 'true' }, glyphElement(label.glyph)),
          h('span', { class: 'step-text' }, h('span', { class: 'step-name' }, step.name), meta)));
    });
    replace(this.timeline, setupItem, items);
    if (focusedId !== undefined && focusedId !== null) this.timeline.querySelector<HTMLElement>(`button[data-step-id="${CSS.escape(focusedId)}"]`)?.focus();
  }

  renderAttempts(latest: number, shown: number): void {
    const options: HTMLOptionElement[] = [];
    for (let attempt = Math.max(latest, 1); attempt >= 1; attempt -= 1) {
      options.push(h('option', { value: attempt }, `Attempt ${attempt}${attempt === latest && latest > 1 ? ' (latest)' : ''}`));
    }
    const key = `${latest}`;
    if (this.attemptSelect.dataset.built !== key) {
      this.attemptSelect.dataset.built = key;
      replace(this.attemptSelect, options);
    }
    this.attemptSelect.value = String(Math.max(shown, 1));
  }
}
