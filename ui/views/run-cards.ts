// The cards above a run that ask someone to act on a step that waits: an approval step's decision,
// an agent step paused at its budget cap, and a step waiting out the model's usage limit. The run
// page shows the one that applies first, whatever step is selected (run.ts renderApproval).

import type { ApprovalChoices, StepRun } from '../../src/core/api';
import { statusGlyphs, statusLabel } from '../app';
import { h } from '../dom';
import { livenessElement } from './liveness';
import { glyphElement } from './runs';

/** Answers a paused step (approveStep `go` true / false): `button` shows `busyText` meanwhile, a toast `doneText` after. */
export type AnswerPause = (button: HTMLButtonElement, go: boolean, busyText: string, doneText: string) => void;

/** The card for an approval step that waits. `decide` resolves to an error message, or '' on success. */
export function approvalCard(step: StepRun, choices: ApprovalChoices | undefined, decide: (approved: boolean, comment: string, selected: string[] | undefined) => Promise<string>): HTMLElement {
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

/** An agent step paused at a budget cap: what was spent of what, what the agent was doing, and Continue / Stop (approveStep true / false). */
export function budgetCard(step: StepRun, answer: AnswerPause): HTMLElement {
  const act = (button: HTMLButtonElement, go: boolean) => answer(button, go, go ? 'Continuing…' : 'Stopping…', go ? 'Continuing with the cap raised' : 'Stopped at its budget');
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
export function rateLimitCard(step: StepRun, answer: AnswerPause): HTMLElement {
  const act = (button: HTMLButtonElement, go: boolean) => answer(button, go, go ? 'Resuming…' : 'Stopping…', go ? 'Resumed' : 'Stopped waiting');
  const resume: HTMLButtonElement = h('button', { type: 'button', class: 'primary', 'data-test': 'resume-now', onclick: () => act(resume, true) }, 'Resume now');
  const stop: HTMLButtonElement = h('button', { type: 'button', 'data-test': 'stop-waiting', onclick: () => act(stop, false) }, 'Stop waiting');
  return h('section', { class: 'approval-card rate-limit-card', 'data-test': 'rate-limit-card', 'aria-label': `${step.name} waits for the model's usage limit` },
    h('h3', {}, glyphElement(statusLabel('waiting').glyph), step.name, ': ', livenessElement(step)),
    h('p', { class: 'approval-message' }, 'The model provider\'s usage limit stopped the agent. It goes on in its own session when the limit resets; this is not a failed attempt.'),
    h('div', { class: 'approval-actions' }, resume, stop));
}
