// The Run screen: one run's header and actions, the card to decide on an approval step that waits
// (always first, whatever step is selected), its steps as a timeline, and the selected step's log.
// `#/runs/<id>?step=<step>&attempt=<n>#L<line>` links to a line of a step attempt's log (step ''
// is the setup log); a click on a line's number sets it.
//
// View: `RunView` owns the DOM. Controller: `runScreen` reads the full run with `getRun`, reads it
// again (at most every 300 ms) when the slim run in the snapshot changes, and follows the live
// log lines of the selected step attempt.

import type { ApprovalChoices, LogPage, Run, RunStatus, StepRun } from '../../src/core/api';
import { errorText, externalLink, statusGlyphs, statusLabel, type AppContext, type ScreenFactory } from '../app';
import { duration, h, relativeTime, replace, timeElement } from '../dom';
import { decidedBy, optionLabels } from './approval-words';
import { confirmAction } from './dialog';
import { cancelRun } from './run-cancel';
import { glyphElement, LogView, type LogViewOptions } from './log-view';
import { causeLink, errorBeforeCause, lineHref } from './failure-cause';
import { focusHeading } from './shortcuts';
import { pullRequestSection } from './pull-request';
import { runTime, runTitle, statusPill, stepTime } from './runs';
import { livenessElement, livenessKey, tickLiveness, usageParts } from './liveness';

const finished: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled', 'rejected'];
const cancellable: readonly RunStatus[] = ['queued', 'running', 'waiting'];
/** Re-read the full run at most this often. */
const refetchInterval = 300;
/** The setup log is selected with this step id, as in LogLine. */
const setupStepId = '';

/** The reader's choices, kept while the app runs: lines wrap by default on a phone. */
let wrapChoice: boolean | undefined;
let showTimes = false;

interface Selection {
  stepId: string;
  /** undefined: the latest attempt, following new ones. */
  attempt?: number;
}


/** How long a step took, or has taken so far (the end of its run, for one that never finished). */
/** A duration; `live` ones tick (data-started) in the screen's ticker. */
function durationElement(elapsed: number, live: boolean): HTMLElement {
  return h('span', live ? { class: 'live-duration', 'data-started': Date.now() - elapsed } : {}, duration(elapsed));
}

/** A problem in words, with what to do: a link, or the step whose log shows why ('' the setup log). */
interface Problem {
  text: string;
  link?: [href: string, text: string];
  stepId?: string;
}

/** Text for people: `code` marks become quotes. */
const plain = (text: string) => text.replace(/`([^`]*)`/g, '“$1”').replace(/\.$/, '');

function stepProblem(name: string, error: string): Problem {
  const harness = /^(.+?) is not installed:(?:.*install it with `([^`]+)`)?/.exec(error);
  const link: Problem['link'] = /harness/i.test(error) || harness ? ['#/harnesses', 'Harnesses'] : undefined;
  if (harness) return { text: `${harness[1]} is not installed: install it${harness[2] ? ` (${harness[2]})` : ''} or pick another harness in the pipeline.`, link };
  return { text: `“${name}” failed: ${plain(error).replace(/^[A-Z](?=[a-z])/, (letter) => letter.toLowerCase())}. Its log shows why; Retry runs it again.`, link };
}

/** Why a run ended badly, said once (the failed step's pane does not repeat it). */
function runProblem(run: Run): Problem | undefined {
  const error = run.error;
  const name = (id: string) => run.steps.find((step) => step.id === id)?.name ?? id;
  if (!error) return undefined;
  const failed = /^Step `([^`]+)` failed: ([\s\S]*)$/.exec(error);
  // A step whose harness cannot run printed nothing: no log to show, the link says where to go.
  const failedStep = failed ? run.steps.find((step) => step.id === failed[1]) : undefined;
  const problem = failed && stepProblem(name(failed[1]!), failedStep ? errorBeforeCause(failed[2]!, failedStep) : failed[2]!);
  if (problem) return problem.link ? problem : { ...problem, stepId: failed![1]! };
  const rejected = /^Rejected at step `([^`]+)`/.exec(error);
  if (rejected) return { text: `Rejected at “${name(rejected[1]!)}”.` };
  if (error.startsWith('Setup failed: ')) return { text: `The setup failed: ${plain(error.slice(14))}.`, stepId: setupStepId };
  if (error === 'interrupted') return { text: 'Factory stopped while this run was running: retry it.' };
  return { text: `${plain(error)}.` };
}

class RunView {
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
  openLine: (stepId: string, attempt: number, n: number) => void = () => undefined;

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

  /** What the pane says above the log: the step's error, a past decision, the agent's prompt. */
  renderNotices(run: Run, step: StepRun | undefined, choices: ApprovalChoices | undefined): void {
    // Rebuilt only when its content changes, so an opened "Prompt" stays open.
    // A step whose failure ended the run: the header says so, once.
    const error = step?.error && !run.error?.startsWith(`Step \`${step.id}\` failed:`) ? stepProblem(step.name, errorBeforeCause(step.error, step)) : undefined;
    const key = JSON.stringify([step?.id, step?.status, error, step?.cause, step?.approval, step?.prompt?.length, step?.systemPrompt?.length, step ? '' : run.workspace]);
    if (this.notices.dataset.key === key) return;
    this.notices.dataset.key = key;
    const notices: HTMLElement[] = [];
    if (error) notices.push(h('p', { class: 'pane-note pane-note-error', role: 'note' }, error.text, error.link ? [' ', h('a', { href: error.link[0] }, error.link[1])] : null, step && causeLink(run.id, step, this.openLine)));
    if (step?.status === 'waiting') notices.push(h('p', { class: 'meta' }, 'Waiting for a decision: the card above.'));
    if (step?.approval) {
      const approval = step.approval;
      const chosen = optionLabels(choices, approval.selected);
      notices.push(h('div', { class: `pane-note run-decision ${approval.approved ? 'status-succeeded' : 'status-rejected'}` },
        h('strong', {}, approval.approved ? '✓ Approved' : '⊘ Rejected'), approval.by ? ` by ${decidedBy(approval.by)}` : null, ' ', timeElement(approval.at),
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
  const runPath = `#/runs/${encodeURIComponent(runId)}`;
  const view = new RunView({
    read: readLog,
    readTail: () => void loadLog(shown.stepId, shown.attempt, logKey, true),
    onFollowChange: (follow) => (view.followBox.checked = follow),
    onLineLink: (n) => history.replaceState(null, '', `${runPath}?step=${encodeURIComponent(shown.stepId)}&attempt=${shown.attempt}#L${n}`),
  }, api.platform === 'web', () => void api.openPath(logPath()).catch((error) => context.toast(errorText(error), 'error')));
  // A failure's cause: its step attempt shown, then the line, marked; the address links to it.
  view.openLine = (stepId, attempt, n) => {
    const key = `${stepId}:${attempt}`;
    linkedLine = { key, n };
    select(stepId, attempt >= (stepOf(stepId)?.attempt ?? 0) ? undefined : attempt);
    history.replaceState(null, '', lineHref(runId, stepId, attempt, n));
    if (logKey === key && !loading) {
      linkedLine = undefined;
      void view.logView.goToLine(n);
    }
  };
  view.wrapBox.checked = wrapChoice ?? matchMedia('(max-width: 699px)').matches;
  view.logView.setWrap(view.wrapBox.checked);
  view.timesBox.checked = showTimes;
  view.logView.setTimes(showTimes);

  let run: Run | undefined;
  let selection: Selection | undefined;
  let userChose = false;
  // A link to a line (`?step=…&attempt=…#L120`): its step attempt is shown, then the line.
  const link = /\?step=([^&#]*)&attempt=(\d+)#L(\d+)$/.exec(location.hash);
  let linkedLine = link ? { key: `${decodeURIComponent(link[1]!)}:${link[2]}`, n: Number(link[3]) } : undefined;
  if (link) {
    selection = { stepId: decodeURIComponent(link[1]!), attempt: Number(link[2]) };
    userChose = true;
  }
  let renderedActionsFor = '';
  let disposed = false;
  // The log shown: `${stepId}:${attempt}`.
  let logKey = '';
  let loading = false;
  let approvalKey = '';
  // Re-reading the run: one call at a time, at most every 300 ms.
  let lastSignature = '';
  let seenInSnapshot = false;
  let fetching = false;
  let fetchAgain = false;
  let lastFetchAt = 0;
  let fetchTimer: ReturnType<typeof setTimeout> | undefined;

  function signature(slim: Run): string {
    return `${slim.status}|${slim.finishedAt ?? ''}|${slim.branch ?? ''}|${slim.steps.map((step) => `${step.id}:${step.status}:${step.attempt}:${step.finishedAt ?? ''}`).join(',')}`;
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

  /** Unless the reader chose: the last step that ran (a waiting one has its card above), else the setup log. */
  function pickSelection(current: Run): void {
    if (userChose && selection) return;
    const ran = [...current.steps].reverse().find((step) => step.attempt > 0 && !['pending', 'skipped', 'waiting'].includes(step.status));
    selection = { stepId: ran?.id ?? setupStepId };
  }

  function render(): void {
    if (!run) return;
    view.renderHeader(run, (url, text) => externalLink(context, url, text, 'issue-key'), (stepId) => select(stepId), context.state.snapshot?.runners?.find((runner) => runner.id === run?.runnerId)?.name);
    renderPullRequest();
    renderActions(run);
    renderApproval(run);
    pickSelection(run);
    view.renderTimeline(run, selection!.stepId);
    renderPane();
  }

  /** The pull request block, from the run and the snapshot's runs (its follow-ups, its latest state); rebuilt when those change. */
  let pullRequestKey = '';
  function renderPullRequest(): void {
    if (!run) return;
    const runs = context.state.snapshot?.runs ?? [];
    // The snapshot's slim run is the newer one when a pull request's state changed.
    const current = runs.find((candidate) => candidate.id === runId) ?? run;
    const key = JSON.stringify([current.followUp, current.steps.map((step) => step.pullRequest), runs.filter((candidate) => candidate.followUp || candidate.steps.some((step) => step.pullRequest))
      .map((candidate) => [candidate.id, candidate.status, candidate.followUp?.number, candidate.steps.map((step) => step.pullRequest?.state)])]);
    if (key === pullRequestKey) return;
    pullRequestKey = key;
    replace(view.pullRequest, pullRequestSection(context, current, runs));
  }

  /** The card of the approval step that waits, above everything else; kept while the same attempt waits. A step waiting out the model's usage limit gets its own card. */
  function renderApproval(current: Run): void {
    const step = current.steps.find((candidate) => candidate.kind === 'approval' && candidate.status === 'waiting');
    const limited = current.steps.find((candidate) => candidate.status === 'waiting' && candidate.liveness === 'rateLimited');
    const capped = current.steps.find((candidate) => candidate.status === 'waiting' && candidate.budgetStop);
    const key = step ? `${step.id}:${step.attempt}` : limited ? `limit:${limited.id}:${limited.resumeAt}` : capped ? `budget:${capped.id}:${capped.budgetStop!.at}:${capped.message ?? ''}` : '';
    if (key === approvalKey) return;
    approvalKey = key;
    // On a phone the run's actions move below everything while a decision waits (fit.css).
    view.element.classList.toggle('run-page-deciding', Boolean(step ?? capped));
    replace(view.approvalHost, step ? view.approvalCard(step, choicesOf(step.id), (approved, comment, selected) => decide(step.id, approved, comment, selected))
      : limited ? rateLimitCard(limited) : capped ? budgetCard(capped) : null);
  }

  /** An agent step paused at a budget cap: what was spent of what, what the agent was doing, and Continue / Stop (approveStep true / false). */
  function budgetCard(step: StepRun): HTMLElement {
    const act = (button: HTMLButtonElement, go: boolean) => void runAction(button, go ? 'Continuing…' : 'Stopping…', async () => {
      await api.approveStep(runId, step.id, go);
      context.toast(go ? 'Continuing with the cap raised' : 'Stopped at its budget');
      scheduleFetch();
    });
    const go: HTMLButtonElement = h('button', { type: 'button', class: 'primary', 'data-test': 'budget-continue', onclick: () => act(go, true) }, 'Continue');
    const stop: HTMLButtonElement = h('button', { type: 'button', 'data-test': 'budget-stop', onclick: () => act(stop, false) }, 'Stop the step');
    const limit = { cost: 'cost', tokens: 'token', minutes: 'time', daily: 'daily spend' }[step.budgetStop!.limit];
    return h('section', { class: 'approval-card budget-card', 'data-test': 'budget-card', 'aria-labelledby': `budget-${step.id}` },
      h('h3', { id: `budget-${step.id}` }, h('span', { class: 'status status-waiting' }, glyphElement(statusGlyphs.waiting), 'waiting'), ' ', step.name, `: ${limit} budget reached`),
      h('p', { class: 'approval-message' }, step.message ?? 'The agent was stopped at its budget; its work stays in the workspace.'),
      step.budgetStop!.limit === 'daily' ? h('p', { class: 'meta' }, 'Raising the daily limit in Settings lets every paused step go on.') : null,
      h('div', { class: 'approval-actions' }, go, stop));
  }

  /** A step waiting out the model's usage limit: when it goes on, and Resume now / Stop waiting (approveStep true / false). */
  function rateLimitCard(step: StepRun): HTMLElement {
    const act = (button: HTMLButtonElement, go: boolean) => void runAction(button, go ? 'Resuming…' : 'Stopping…', async () => {
      await api.approveStep(runId, step.id, go);
      context.toast(go ? 'Resumed' : 'Stopped waiting');
      scheduleFetch();
    });
    const resume: HTMLButtonElement = h('button', { type: 'button', class: 'primary', 'data-test': 'resume-now', onclick: () => act(resume, true) }, 'Resume now');
    const stop: HTMLButtonElement = h('button', { type: 'button', 'data-test': 'stop-waiting', onclick: () => act(stop, false) }, 'Stop waiting');
    return h('section', { class: 'approval-card rate-limit-card', 'data-test': 'rate-limit-card', 'aria-label': `${step.name} waits for the model's usage limit` },
      h('h3', {}, glyphElement(statusLabel('waiting').glyph), step.name, ': ', livenessElement(step)),
      h('p', { class: 'approval-message' }, 'The model provider\'s usage limit stopped the agent. It goes on in its own session when the limit resets; this is not a failed attempt.'),
      h('div', { class: 'approval-actions' }, resume, stop));
  }

  function renderActions(current: Run): void {
    const key = `${current.status}|${current.steps.map((step) => step.id).join(',')}`;
    if (key === renderedActionsFor) return;
    renderedActionsFor = key;
    const buttons: HTMLElement[] = [];
    if (cancellable.includes(current.status)) {
      // Asks first, or (queued) undoes: run-cancel.ts.
      const cancel: HTMLButtonElement = h('button', { type: 'button', 'data-test': 'cancel', onclick: () => void cancelRun(context, current, cancel) }, 'Cancel');
      buttons.push(cancel);
    }
    if (finished.includes(current.status)) {
      buttons.push(retryMenu(current));
      const remove: HTMLButtonElement = h('button', { type: 'button', class: 'danger', 'data-test': 'delete', onclick: async () => {
        if (!await confirmAction({ title: `Delete the run “${runTitle(current)}”?`, body: 'Its logs are deleted too. This cannot be undone.', confirm: 'Delete', danger: true })) return;
        void runAction(remove, 'Deleting…', async () => {
          const kept = await api.deleteRun(runId);
          context.toast(kept ? `Run deleted: ${kept}` : 'Run deleted');
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
    view.attemptSelect.hidden = latest <= 1;
    view.renderNotices(run, step, step ? choicesOf(step.id) : undefined);
    view.logView.setCause(step?.cause && attempt === step.attempt ? step.cause.line : undefined);
    // An approval step has no log: its message and decision say it all.
    view.logToolbar.hidden = view.logView.element.hidden = step?.kind === 'approval';
    if (step?.kind === 'approval') return;
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
    if (view.logFile instanceof HTMLAnchorElement) view.logFile.href = `/api/log/${[runId, stepId || '_setup', attempt].map(encodeURIComponent).join('/')}`;
    if (!again) view.logView.reset('Loading the log…');
    try {
      const lines = await readLog();
      if (disposed || logKey !== key) return;
      view.logView.showTail(lines);
      view.logFile.hidden = lines.length === 0; // no file yet: shown when live lines come
      if (linkedLine?.key === key) void view.logView.goToLine(linkedLine.n);
      linkedLine = undefined;
    } catch (error) {
      if (disposed || logKey !== key) return;
      view.logView.showProblem(`Could not read the log: ${errorText(error)}`);
    } finally {
      if (logKey === key) {
        loading = false;
        view.logView.setEmptyText(emptyText(stepId === setupStepId ? undefined : stepOf(stepId)));
      }
    }
  }

  async function decide(stepId: string, approved: boolean, comment: string, selected: string[] | undefined): Promise<string> {
    try {
      await api.approveStep(runId, stepId, approved, comment || undefined, selected);
      // The card goes with the decision: focus goes to the run's heading, not the page body.
      focusHeading(view.element);
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
    if (location.hash !== runPath) history.replaceState(null, '', runPath); // a line link no longer holds
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
  view.wrapBox.addEventListener('change', () => view.logView.setWrap((wrapChoice = view.wrapBox.checked)));
  view.timesBox.addEventListener('change', () => view.logView.setTimes((showTimes = view.timesBox.checked)));

  // Live lines of the selected step attempt: the view lines them up with what it read.
  const unsubscribe = api.on('logs', (batch) => {
    if (!selection || !logKey) return;
    const mine = batch.filter((line) => line.runId === runId && line.stepId === shown.stepId && (shown.stepId === setupStepId || line.attempt === shown.attempt));
    if (mine.length === 0) return;
    view.logFile.hidden = false;
    view.logView.append(mine);
  });

  // Running durations and relative times tick, while the page is visible, without re-rendering.
  const ticker = setInterval(() => {
    if (document.hidden) return;
    const now = Date.now();
    for (const element of view.element.querySelectorAll<HTMLElement>('.live-duration[data-started]')) element.textContent = duration(now - Number(element.dataset.started));
    for (const element of view.element.querySelectorAll<HTMLElement>('time[data-at]')) element.textContent = relativeTime(Number(element.dataset.at), now);
    tickLiveness(view.element, now);
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
      else if (run && livenessKey(slim.steps, slim.usage) !== livenessKey(run.steps, run.usage)) {
        // Liveness and usage change while a step runs: taken from the slim run, without reading the whole run again.
        for (const step of run.steps) {
          const fresh = slim.steps.find((candidate) => candidate.id === step.id);
          for (const field of ['liveness', 'livenessSince', 'resumeAt', 'usage'] as const) {
            if (fresh?.[field] === undefined) delete step[field];
            else (step as unknown as Record<string, unknown>)[field] = fresh[field];
          }
        }
        if (slim.usage) run.usage = slim.usage;
        else delete run.usage;
        render();
      }
      renderPullRequest();
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
