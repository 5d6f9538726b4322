// The Run screen: one run's header and actions, its steps as a timeline, and the selected step's
// log (or, for an approval step that waits, the card to decide on it).
//
// View: `RunView` owns the DOM. Controller: `runScreen` reads the full run with `getRun`, reads it
// again (at most every 300 ms) when the slim run in the snapshot changes, and follows the live
// log lines of the selected step attempt.

import type { ApprovalChoices, LogLine, LogPage, Run, RunStatus, StepRun } from '../../src/core/api';
import { errorText, externalLink, statusGlyphs, statusLabel, type AppContext, type ScreenFactory } from '../app';
import { duration, h, replace, timeElement } from '../dom';
import { glyphElement, LogView, linesAfter, type LogViewOptions } from './log-view';
import { runDuration, runTitle, statusPill } from './runs';

const finished: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled', 'rejected'];
const cancellable: readonly RunStatus[] = ['queued', 'running', 'waiting'];
/** Re-read the full run at most this often. */
const refetchInterval = 300;
/** The setup log is selected with this step id, as in LogLine. */
const setupStepId = '';

let wrapLines = false;

interface Selection {
  stepId: string;
  /** undefined: the latest attempt, following new ones. */
  attempt?: number;
}

function formatTokens(count: number): string {
  return count >= 10_000 ? `${Math.round(count / 1000)}k` : count >= 1000 ? `${(count / 1000).toFixed(1)}k` : String(count);
}

function usageText(step: StepRun): string[] {
  const usage = step.usage;
  if (!usage) return [];
  const parts: string[] = [];
  const tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
  if (tokens > 0) parts.push(`${formatTokens(tokens)} tokens`);
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(usage.costUsd < 0.1 ? 3 : 2)}`);
  return parts;
}

/** The step's running time: live (data-started) while it runs. */
function stepDurationElement(step: StepRun): HTMLElement | null {
  if (!step.startedAt) return null;
  if (step.finishedAt) return h('span', {}, duration(step.finishedAt - step.startedAt));
  return h('span', { class: 'live-duration', 'data-started': step.startedAt }, duration(Date.now() - step.startedAt));
}

class RunView {
  readonly element: HTMLElement;
  readonly title = h('h1', { class: 'run-title', 'data-test': 'run-title' });
  readonly meta = h('div', { class: 'run-meta' });
  readonly actions = h('div', { class: 'run-actions', role: 'group', 'aria-label': 'Run actions' });
  readonly runError = h('p', { class: 'run-error', role: 'alert', hidden: true });
  readonly timeline = h('ol', { class: 'timeline', 'aria-label': 'Steps' });
  readonly paneTitle = h('h2', { class: 'pane-title' });
  readonly attemptSelect = h('select', { 'aria-label': 'Attempt', 'data-test': 'attempt' });
  readonly followBox = h('input', { type: 'checkbox', checked: true, 'data-test': 'follow' });
  readonly wrapBox = h('input', { type: 'checkbox', 'data-test': 'wrap' });
  /** "Download log" (remote access) or "Show log file" (desktop). */
  readonly logFile: HTMLAnchorElement | HTMLButtonElement;
  readonly logToolbar: HTMLElement;
  readonly notices = h('div', { class: 'pane-notices' });
  readonly approvalHost = h('div', { class: 'approval-host' });
  readonly logView: LogView;
  readonly body: HTMLElement;

  constructor(logOptions: LogViewOptions, web: boolean, showLogFile: () => void) {
    this.logView = new LogView(logOptions);
    this.logFile = web ? h('a', { class: 'button', download: '', 'data-test': 'log-download' }, 'Download log')
      : h('button', { type: 'button', 'data-test': 'log-file', onclick: showLogFile }, 'Show log file');
    this.logToolbar = h('div', { class: 'toolbar log-toolbar' },
      this.attemptSelect,
      h('label', { class: 'log-check' }, this.followBox, 'Follow'),
      h('label', { class: 'log-check' }, this.wrapBox, 'Wrap lines'),
      this.logView.searchControls,
      this.logFile);
    const header = h('header', { class: 'run-header' },
      h('div', { class: 'run-heading' }, h('a', { href: '#/runs', class: 'back meta' }, '← Runs'), this.title, this.meta),
      this.actions);
    this.body = h('div', { class: 'run-body' },
      h('nav', { class: 'run-steps', 'aria-label': 'Steps of this run' }, this.timeline),
      h('section', { class: 'run-pane', 'aria-labelledby': 'pane-title' }, this.paneTitle, this.approvalHost, this.notices, this.logToolbar, this.logView.element));
    this.paneTitle.id = 'pane-title';
    this.element = h('section', { class: 'page run-page' }, header, this.runError, this.body);
  }

  renderHeader(run: Run, link: (url: string | undefined, text: string) => HTMLElement): void {
    this.title.textContent = runTitle(run);
    const issue = run.issue;
    const key = issue?.key || /^https?:\/\//i.test(issue?.url ?? '') ? link(issue!.url, issue!.key || 'Issue') : null;
    const runTime = runDuration(run);
    replace(this.meta,
      statusPill(run.status, { 'data-test': 'run-status' }),
      key,
      h('a', { href: `#/pipelines/${encodeURIComponent(run.pipelineId)}`, class: 'meta' }, run.pipelineName),
      h('span', { class: 'meta' }, 'started ', timeElement(run.startedAt ?? run.createdAt)),
      runTime ? h('span', { class: `meta${run.finishedAt ? '' : ' live-duration'}`, ...(run.finishedAt ? {} : { 'data-started': run.startedAt }) }, runTime) : null);
    this.runError.hidden = !run.error;
    this.runError.textContent = run.error ?? '';
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
      details.push(stepDurationElement(step));
      details.push(...usageText(step));
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
    this.attemptSelect.disabled = latest <= 1;
  }

  /** What the pane says above the log: the step's error, a past decision, the agent's prompt. */
  renderNotices(run: Run, step: StepRun | undefined, choices: ApprovalChoices | undefined): void {
    // Rebuilt only when its content changes, so an opened "Prompt" stays open.
    const key = JSON.stringify([step?.id, step?.status, step?.error, step?.approval, step?.prompt?.length, step?.systemPrompt?.length, step ? '' : run.workspace]);
    if (this.notices.dataset.key === key) return;
    this.notices.dataset.key = key;
    const notices: HTMLElement[] = [];
    if (step?.error) notices.push(h('p', { class: 'pane-note pane-note-error', role: 'note' }, step.error));
    if (step?.approval) {
      const approval = step.approval;
      const chosen = (approval.selected ?? []).map((id) => choices?.options[Number(id) - 1] ?? id);
      notices.push(h('div', { class: `pane-note run-decision ${approval.approved ? 'status-succeeded' : 'status-rejected'}` },
        h('strong', {}, approval.approved ? '✓ Approved' : '⊘ Rejected'), ' ', timeElement(approval.at),
        chosen.length ? h('p', {}, 'Chose: ', chosen.join(', ')) : null,
        approval.comment ? h('p', { class: 'run-decision-comment' }, approval.comment) : null));
    }
    if (step?.kind === 'approval' && step.message && step.status !== 'waiting') {
      notices.push(h('details', { class: 'pane-note' }, h('summary', {}, 'Message'), h('p', { class: 'approval-message' }, step.message)));
    }
    if (step?.prompt) notices.push(h('details', { class: 'pane-note' }, h('summary', {}, 'Prompt'), h('pre', { class: 'prompt' }, step.prompt)));
    if (step?.systemPrompt) notices.push(h('details', { class: 'pane-note' }, h('summary', {}, 'System prompt'), h('pre', { class: 'prompt' }, step.systemPrompt)));
    if (!step && run.workspace) notices.push(h('p', { class: 'meta' }, 'Workspace: ', h('code', {}, run.workspace)));
    replace(this.notices, notices);
  }

  /** The card for an approval step that waits. `decide` resolves to an error message, or '' on success. */
  approvalCard(step: StepRun, choices: ApprovalChoices | undefined, decide: (approved: boolean, comment: string, selected: string[] | undefined) => Promise<string>): HTMLElement {
    const error = h('p', { class: 'field-error approval-error', role: 'alert' });
    const comment = h('textarea', { 'data-test': 'comment', rows: 3, placeholder: 'Optional: what the next step should know' });
    const inputs: HTMLInputElement[] = [];
    let fieldset: HTMLElement | null = null;
    if (choices && choices.options.length > 0) {
      const type = choices.mode === 'multiple' ? 'checkbox' : 'radio';
      fieldset = h('fieldset', { class: 'choices' },
        h('legend', {}, choices.mode === 'multiple' ? 'Choose any that apply' : 'Choose one'),
        choices.options.map((option, index) => {
          const input = h('input', { type, name: `choice-${step.id}`, value: String(index + 1), 'data-test': 'choice' });
          inputs.push(input);
          input.addEventListener('change', () => (error.textContent = ''));
          return h('label', { class: 'choice' }, input, h('span', { class: 'choice-text' }, option));
        }));
    }
    const approve = h('button', { type: 'button', class: 'primary big', 'data-test': 'approve' }, 'Approve');
    const reject = h('button', { type: 'button', class: 'danger big', 'data-test': 'reject' }, 'Reject');
    const submit = async (approved: boolean): Promise<void> => {
      const selected = choices ? inputs.filter((input) => input.checked).map((input) => input.value) : undefined;
      if (approved && choices && selected!.length === 0) {
        error.textContent = choices.mode === 'multiple' ? 'Choose at least one option to approve.' : 'Choose an option to approve.';
        inputs[0]?.focus();
        return;
      }
      error.textContent = '';
      approve.disabled = reject.disabled = true;
      const button = approved ? approve : reject;
      const label = button.textContent;
      button.textContent = approved ? 'Approving…' : 'Rejecting…';
      const problem = await decide(approved, comment.value.trim(), selected);
      approve.disabled = reject.disabled = false;
      button.textContent = label;
      error.textContent = problem;
    };
    approve.addEventListener('click', () => void submit(true));
    reject.addEventListener('click', () => void submit(false));
    return h('section', { class: 'approval-card', 'data-test': 'approval', 'aria-labelledby': `approval-${step.id}` },
      h('h3', { id: `approval-${step.id}` }, h('span', { class: 'status status-waiting' }, glyphElement(statusGlyphs.waiting), 'waiting'), ' ', step.name),
      h('p', { class: 'approval-message' }, step.message ?? 'This step waits for your decision.'),
      fieldset,
      h('label', {}, h('span', {}, 'Comment'), comment),
      error,
      h('div', { class: 'approval-actions' }, approve, reject));
  }
}

export const runScreen: ScreenFactory = (context: AppContext, params: Record<string, string>) => {
  const runId = params.id!;
  const api = context.api;
  // The log shown: its step ('' for setup) and attempt.
  const shown = { stepId: setupStepId, attempt: 0 };
  const readLog = (page?: LogPage) => (shown.stepId === setupStepId ? api.readRunLog(runId, page) : api.readStepLog(runId, shown.stepId, shown.attempt, page));
  const logPath = () => `${context.state.snapshot?.dataDir}/runs/${runId}/logs/${shown.stepId || '_setup'}.${shown.attempt}.log`;
  const view = new RunView({
    read: readLog,
    readTail: () => void loadLog(shown.stepId, shown.attempt, logKey, true),
    onFollowChange: (follow) => (view.followBox.checked = follow),
  }, api.platform === 'web', () => void api.openPath(logPath()).catch((error) => context.toast(errorText(error), 'error')));
  view.wrapBox.checked = wrapLines;
  view.logView.setWrap(wrapLines);

  let run: Run | undefined;
  let selection: Selection | undefined;
  let userChose = false;
  const seenWaiting = new Set<string>();
  let renderedActionsFor = '';
  let disposed = false;
  // The log shown: `${stepId}:${attempt}`; lines that arrive while it loads wait in `liveSinceRead`.
  let logKey = '';
  let loading = false;
  // After a read, live lines may repeat its end: they are matched against it until they pass it.
  let readLines: LogLine[] | undefined;
  let liveSinceRead: LogLine[] = [];
  let appendedSinceRead = 0;
  let dedupeUntil = 0;
  let approvalKey = '';
  // Re-reading the run: one call at a time, at most every 300 ms.
  let lastSignature = '';
  let seenInSnapshot = false;
  let fetching = false;
  let fetchAgain = false;
  let lastFetchAt = 0;
  let fetchTimer: ReturnType<typeof setTimeout> | undefined;

  function signature(slim: Run): string {
    return `${slim.status}|${slim.finishedAt ?? ''}|${slim.steps.map((step) => `${step.id}:${step.status}:${step.attempt}:${step.finishedAt ?? ''}`).join(',')}`;
  }

  function scheduleFetch(): void {
    if (disposed) return;
    if (fetching) {
      fetchAgain = true;
      return;
    }
    if (fetchTimer) return;
    const wait = Math.max(0, lastFetchAt + refetchInterval - Date.now());
    fetchTimer = setTimeout(() => {
      fetchTimer = undefined;
      void fetchRun();
    }, wait);
  }

  async function fetchRun(): Promise<void> {
    fetching = true;
    lastFetchAt = Date.now();
    try {
      const fresh = await api.getRun(runId);
      if (disposed) return;
      if (!fresh) {
        showGone('This run does not exist, or it was deleted.');
        return;
      }
      run = fresh;
      lastSignature = signature(fresh);
      render();
    } catch (error) {
      if (disposed) return;
      if (!run) showGone(`Could not read the run: ${errorText(error)}`);
      else context.toast(`Could not refresh the run: ${errorText(error)}`, 'error');
    } finally {
      fetching = false;
      if (fetchAgain && !disposed) {
        fetchAgain = false;
        scheduleFetch();
      }
    }
  }

  function showGone(message: string): void {
    replace(view.element, h('h1', {}, 'Run not found'), h('div', { class: 'empty' }, h('p', {}, message), h('a', { href: '#/runs' }, 'Go to Runs')));
  }

  function stepOf(stepId: string): StepRun | undefined {
    return run?.steps.find((step) => step.id === stepId);
  }

  function choicesOf(stepId: string): ApprovalChoices | undefined {
    const definition = run?.pipeline?.steps.find((step) => step.id === stepId);
    return definition?.kind === 'approval' ? definition.choices : undefined;
  }

  /** The waiting step first; otherwise the last step that ran; otherwise the setup log. */
  function pickSelection(current: Run): void {
    const waiting = current.steps.find((step) => step.status === 'waiting');
    const waitingKey = waiting ? `${waiting.id}:${waiting.attempt}` : '';
    if (waiting && !seenWaiting.has(waitingKey)) {
      seenWaiting.add(waitingKey);
      selection = { stepId: waiting.id };
      return;
    }
    if (userChose && selection) return;
    if (waiting) {
      selection = { stepId: waiting.id };
      return;
    }
    const ran = [...current.steps].reverse().find((step) => step.attempt > 0 && step.status !== 'pending' && step.status !== 'skipped');
    selection = { stepId: ran?.id ?? setupStepId };
  }

  function render(): void {
    if (!run) return;
    view.renderHeader(run, (url, text) => externalLink(context, url, text, 'issue-key'));
    renderActions(run);
    pickSelection(run);
    view.renderTimeline(run, selection!.stepId);
    renderPane();
  }

  function renderActions(current: Run): void {
    const key = `${current.status}|${current.steps.map((step) => step.id).join(',')}`;
    if (key === renderedActionsFor) return;
    renderedActionsFor = key;
    const buttons: HTMLElement[] = [];
    if (cancellable.includes(current.status)) {
      const cancel: HTMLButtonElement = h('button', { type: 'button', 'data-test': 'cancel', onclick: () => void runAction(cancel, 'Cancelling…', async () => {
        await api.cancelRun(runId);
        context.toast('Run cancelled');
      }) }, 'Cancel');
      buttons.push(cancel);
    }
    if (finished.includes(current.status)) {
      buttons.push(retryMenu(current));
      const remove: HTMLButtonElement = h('button', { type: 'button', class: 'danger', 'data-test': 'delete', onclick: () => {
        if (!confirm(`Delete the run “${runTitle(current)}” and its logs? This cannot be undone.`)) return;
        void runAction(remove, 'Deleting…', async () => {
          await api.deleteRun(runId);
          context.toast('Run deleted');
          context.navigate('#/runs');
        });
      } }, 'Delete');
      buttons.push(remove);
    }
    replace(view.actions, buttons);
  }

  function retryMenu(current: Run): HTMLElement {
    const summary = h('summary', { class: 'button', 'data-test': 'retry', 'aria-haspopup': 'menu' }, 'Retry ▾');
    const menu = h('div', { class: 'menu-list', role: 'menu' });
    const details = h('details', { class: 'menu' }, summary, menu);
    const choices: [string | undefined, string][] = [[undefined, 'From the start'], ...current.steps.map((step): [string, string] => [step.id, `From “${step.name}”`])];
    for (const [stepId, text] of choices) {
      const item: HTMLButtonElement = h('button', { type: 'button', role: 'menuitem', 'data-test': 'retry-from', 'data-step-id': stepId ?? '', onclick: () => void runAction(item, 'Retrying…', async () => {
        for (const other of menu.querySelectorAll('button')) other.disabled = true;
        try {
          const retried = await api.retryRun(runId, stepId);
          details.open = false;
          context.toast(stepId ? `Retrying from “${stepOf(stepId)?.name ?? stepId}”` : 'Retrying from the start');
          userChose = false;
          if (retried.id !== runId) context.navigate(`#/runs/${encodeURIComponent(retried.id)}`);
          else scheduleFetch();
        } finally {
          for (const other of menu.querySelectorAll('button')) other.disabled = false;
        }
      }) }, text);
      menu.appendChild(item);
    }
    details.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && details.open) {
        details.open = false;
        summary.focus();
      }
    });
    return details;
  }

  async function runAction(button: HTMLButtonElement, busyText: string, action: () => Promise<void>): Promise<void> {
    const label = button.textContent;
    button.disabled = true;
    button.textContent = busyText;
    try {
      await action();
    } catch (error) {
      context.toast(errorText(error), 'error');
    } finally {
      button.disabled = false;
      button.textContent = label;
    }
  }

  function renderPane(): void {
    if (!run || !selection) return;
    const isSetup = selection.stepId === setupStepId;
    const step = isSetup ? undefined : stepOf(selection.stepId);
    const latest = step?.attempt ?? 0;
    const attempt = isSetup ? 0 : selection.attempt ?? Math.max(latest, 1);
    view.paneTitle.textContent = isSetup ? 'Setup log' : step?.name ?? selection.stepId;
    view.renderAttempts(latest, attempt);
    view.attemptSelect.hidden = isSetup;
    const choices = step ? choicesOf(step.id) : undefined;
    view.renderNotices(run, step, choices);

    const waitingApproval = step?.kind === 'approval' && step.status === 'waiting' && attempt === latest;
    view.body.classList.toggle('has-approval', waitingApproval);
    view.logToolbar.hidden = waitingApproval;
    view.logView.element.hidden = waitingApproval;
    if (waitingApproval) {
      const key = `${step.id}:${step.attempt}`;
      if (approvalKey !== key) {
        approvalKey = key;
        replace(view.approvalHost, view.approvalCard(step, choices, (approved, comment, selected) => decide(step.id, approved, comment, selected)));
      }
      return;
    }
    if (approvalKey) {
      approvalKey = '';
      replace(view.approvalHost);
    }
    const key = `${selection.stepId}:${attempt}`;
    if (key !== logKey) void loadLog(selection.stepId, attempt, key);
    else if (!loading) view.logView.setEmptyText(emptyText(step));
  }

  function emptyText(step: StepRun | undefined): string {
    // A project folder used as it is (no worktree, no setup command) gets no setup log at all.
    if (!step) return run?.workspace ? 'Nothing to set up: the project folder is used as it is.' : run && finished.includes(run.status) ? 'The setup printed nothing.' : 'No setup output yet.';
    if (step.status === 'pending') return 'This step has not started yet.';
    if (step.status === 'skipped') return 'This step was skipped.';
    if (step.status === 'running') return 'Waiting for output…';
    return 'This step printed nothing.';
  }

  /** Reads the tail of a log: another one (`again` false) replaces the view; the same one joins it. */
  async function loadLog(stepId: string, attempt: number, key: string, again = false): Promise<void> {
    if (loading && again) return;
    logKey = key;
    Object.assign(shown, { stepId, attempt });
    loading = true;
    readLines = undefined;
    liveSinceRead = [];
    appendedSinceRead = 0;
    if (view.logFile instanceof HTMLAnchorElement) view.logFile.href = `/api/log/${[runId, stepId || '_setup', attempt].map(encodeURIComponent).join('/')}`;
    if (!again) view.logView.reset('Loading the log…');
    try {
      const lines = await readLog();
      if (disposed || logKey !== key) return;
      view.logView.showTail(lines);
      view.logFile.hidden = lines.length === 0; // no file yet: shown when live lines come
      readLines = lines;
      dedupeUntil = Date.now() + 3000;
    } catch (error) {
      if (disposed || logKey !== key) return;
      view.logView.showProblem(`Could not read the log: ${errorText(error)}`);
    } finally {
      if (logKey === key) {
        loading = false;
        appendLive([]);
        view.logView.setEmptyText(emptyText(stepId === setupStepId ? undefined : stepOf(stepId)));
      }
    }
  }

  async function decide(stepId: string, approved: boolean, comment: string, selected: string[] | undefined): Promise<string> {
    try {
      await api.approveStep(runId, stepId, approved, comment || undefined, selected);
      context.toast(approved ? 'Approved' : 'Rejected');
      scheduleFetch();
      return '';
    } catch (error) {
      return errorText(error);
    }
  }

  function select(stepId: string, attempt?: number): void {
    userChose = true;
    selection = { stepId, attempt };
    if (run) view.renderTimeline(run, stepId);
    renderPane();
  }

  // Controls. The timeline uses one listener for all its steps.
  view.timeline.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLElement>('button[data-step-id]');
    if (button) select(button.dataset.stepId ?? setupStepId);
  });
  view.attemptSelect.addEventListener('change', () => {
    if (!selection) return;
    const attempt = Number(view.attemptSelect.value);
    const latest = stepOf(selection.stepId)?.attempt ?? 0;
    select(selection.stepId, attempt >= latest ? undefined : attempt);
  });
  view.followBox.addEventListener('change', () => view.logView.setFollow(view.followBox.checked));
  view.wrapBox.addEventListener('change', () => {
    wrapLines = view.wrapBox.checked;
    view.logView.setWrap(wrapLines);
  });

  // Live lines of the selected step attempt.
  const unsubscribe = api.on('logs', (batch) => {
    if (!selection) return;
    const stepId = selection.stepId;
    const latest = stepOf(stepId)?.attempt ?? 0;
    const attempt = selection.attempt ?? Math.max(latest, 1);
    const mine = batch.filter((line) => line.runId === runId && line.stepId === stepId && (stepId === setupStepId || line.attempt === attempt));
    if (mine.length === 0) return;
    if (loading) liveSinceRead.push(...mine);
    else appendLive(mine);
  });

  function appendLive(lines: LogLine[]): void {
    if (lines.length > 0) view.logFile.hidden = false;
    if (!readLines) {
      view.logView.append(liveSinceRead.concat(lines));
      liveSinceRead = [];
      return;
    }
    liveSinceRead.push(...lines);
    const fresh = linesAfter(readLines, liveSinceRead);
    view.logView.append(fresh.slice(appendedSinceRead));
    appendedSinceRead = fresh.length;
    if (fresh.length > 0 || Date.now() > dedupeUntil) {
      readLines = undefined;
      liveSinceRead = [];
      appendedSinceRead = 0;
    }
  }

  // Running durations tick without re-rendering.
  const ticker = setInterval(() => {
    const now = Date.now();
    for (const element of view.element.querySelectorAll<HTMLElement>('.live-duration[data-started]')) {
      element.textContent = duration(now - Number(element.dataset.started));
    }
  }, 1000);

  view.title.textContent = 'Loading…';
  void fetchRun();

  return {
    element: view.element,
    update() {
      const slim = context.state.snapshot?.runs.find((candidate) => candidate.id === runId);
      if (!slim) {
        if (seenInSnapshot) showGone('This run was deleted.');
        return;
      }
      seenInSnapshot = true;
      if (signature(slim) !== lastSignature) scheduleFetch();
    },
    dispose() {
      disposed = true;
      unsubscribe();
      clearInterval(ticker);
      clearTimeout(fetchTimer);
      view.logView.dispose();
    },
  };
};
