// The step pane's notes above the log: the step's error and its cause line, a waiting note, a past
// decision (who, when, what they chose and said), an approval's message, the agent's prompts, and
// for the setup log the workspace folder.

import type { ApprovalChoices, Run, StepRun } from '../../src/core/api';
import { h, replace, timeElement } from '../dom';
import { decidedBy, optionLabels } from './approval-words';
import { causeLink, errorBeforeCause } from './failure-cause';
import { stepProblem } from './run-problem';

/** Shows line `n` of a step attempt's log (a failure's cause). */
export type OpenLine = (stepId: string, attempt: number, n: number) => void;

/** What the pane says above the log: the step's error, a past decision, the agent's prompt. */
export function renderNotices(host: HTMLElement, run: Run, step: StepRun | undefined, choices: ApprovalChoices | undefined, openLine: OpenLine): void {
  // Rebuilt only when its content changes, so an opened "Prompt" stays open.
  // A step whose failure ended the run: the header says so, once.
  const error = step?.error && !run.error?.startsWith(`Step \`${step.id}\` failed:`) ? stepProblem(step.name, errorBeforeCause(step.error, step)) : undefined;
  const key = JSON.stringify([step?.id, step?.status, error, step?.cause, step?.approval, step?.prompt?.length, step?.systemPrompt?.length, step ? '' : run.workspace]);
  if (host.dataset.key === key) return;
  host.dataset.key = key;
  const notices: HTMLElement[] = [];
  if (error) notices.push(h('p', { class: 'pane-note pane-note-error', role: 'note' }, error.text, error.link ? [' ', h('a', { href: error.link[0] }, error.link[1])] : null, step && causeLink(run.id, step, openLine)));
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
  replace(host, notices);
}
