// The Run screen: one run's header and actions, the card to decide on an approval step that waits
// (always first, whatever step is selected), its steps as a timeline, and the selected step's log.
// `#/runs/<id>?step=<step>&attempt=<n>#L<line>` links to a line of a step attempt's log (step ''
// is the setup log); a click on a line's number sets it.
//
// View: `RunView` (run-view.ts) owns the DOM. Controller: `runScreen` reads the full run with
// `getRun`, reads it again (at most every 300 ms) when the slim run in the snapshot changes, picks
// the step shown and reads its log, follows the live log lines of the selected step attempt, and
// joins the actions (run-actions.ts), the cards (run-cards.ts) and the pull request block
// (pull-request.ts) to the API.

import type { ApprovalChoices, LogPage, Run, StepRun } from '../../src/core/api';
import { errorText, externalLink, type AppContext, type ScreenFactory } from '../app';
import { duration, h, relativeTime, replace } from '../dom';
import { lineHref } from './failure-cause';
import { focusHeading } from './shortcuts';
import { pullRequestSection } from './pull-request';
import { livenessKey, tickLiveness } from './liveness';
import { finished, runAction, runActions } from './run-actions';
import { approvalCard, budgetCard, rateLimitCard, type AnswerPause } from './run-cards';
import { renderNotices } from './run-notices';
import { setupStepId } from './run-problem';
import { RunView } from './run-view';

/** Re-read the full run at most this often. */
const refetchInterval = 300;

/** The reader's choices, kept while the app runs: lines wrap by default on a phone. */
let wrapChoice: boolean | undefined;
let showTimes = false;

interface Selection {
  stepId: string;
  /** undefined: the latest attempt, following new ones. */
  attempt?: number;
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
    replace(view.approvalHost, step ? approvalCard(step, choicesOf(step.id), (approved, comment, selected) => decide(step.id, approved, comment, selected))
      : limited ? rateLimitCard(limited, answerPause(limited.id)) : capped ? budgetCard(capped, answerPause(capped.id)) : null);
  }

  function answerPause(stepId: string): AnswerPause {
    return (button, go, busyText, doneText) => void runAction(context, button, busyText, async () => {
      await api.approveStep(runId, stepId, go);
      context.toast(doneText);
      scheduleFetch();
    });
  }

  function renderActions(current: Run): void {
    const key = `${current.status}|${current.steps.map((step) => step.id).join(',')}`;
    if (key === renderedActionsFor) return;
    renderedActionsFor = key;
    replace(view.actions, runActions(context, current, (retried) => {
      userChose = false;
      if (retried.id !== runId) context.navigate(`#/runs/${encodeURIComponent(retried.id)}`);
      else scheduleFetch();
    }));
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
    renderNotices(view.notices, run, step, step ? choicesOf(step.id) : undefined, view.openLine);
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
