// The editor's problems and warnings (pipeline-editor.ts): each at its field (a step's at its
// card, which opens), problems also in a summary at the top linked to their fields, warnings in
// amber that never mark a field invalid, and one field's check shown when it loses focus.

import type { FieldMessage, PipelineInput } from '../../src/core/api';
import { h, replace } from '../dom';
import { clearFieldErrors, showFieldError, uniqueId } from './form';
import type { StepCard } from './pipeline-step-card';

/** A message as a field of a step card shows it: the card says which step, so "Step 2: the id …" reads "The id …". */
function atField(container: HTMLElement, message: string): string {
  return container.closest('.step-card') ? message.replace(/^Step \d+: (\S)/, (_match, letter: string) => letter.toUpperCase()) : message;
}

/** Shows a warning at a field container, after its control, in amber; the controls are described by it but stay valid. */
function showFieldWarning(container: HTMLElement, message: string): void {
  const warning = h('p', { class: 'field-warning', 'data-test': 'field-warning', id: uniqueId('warning') }, atField(container, message));
  container.appendChild(warning);
  const controls = container.matches('input, select, textarea') ? [container] : Array.from(container.querySelectorAll<HTMLElement>('input, select, textarea'));
  for (const control of controls) {
    const described = control.getAttribute('aria-describedby');
    control.setAttribute('aria-describedby', described ? `${described} ${warning.id}` : warning.id);
  }
}

/** Removes the warnings under `root`, and their ids from the controls they described. */
function clearFieldWarnings(root: HTMLElement): void {
  const removed = new Set<string>();
  for (const warning of root.querySelectorAll('.field-warning[data-test="field-warning"]')) {
    removed.add(warning.id);
    warning.remove();
  }
  if (removed.size === 0) return;
  for (const control of root.querySelectorAll<HTMLElement>('[aria-describedby]')) {
    const kept = control.getAttribute('aria-describedby')!.split(' ').filter((id) => !removed.has(id));
    if (kept.length > 0) control.setAttribute('aria-describedby', kept.join(' '));
    else control.removeAttribute('aria-describedby');
  }
}

/** What the messages need of the editor: its page, its form and its step cards. */
interface MessagesHost {
  readonly element: HTMLElement;
  readonly form: HTMLFormElement;
  readonly cards: Map<HTMLElement, StepCard>;
  orderedCards(): StepCard[];
  expand(card: StepCard): void;
}

/** The problems and warnings shown on one editor's form, and the summary of its problems. */
export class PipelineMessages {
  readonly summary = h('div', { class: 'form-summary', role: 'alert', tabindex: '-1', hidden: true });
  private readonly summaryTargets = new Map<HTMLElement, HTMLElement>();

  constructor(private readonly editor: MessagesHost) {}

  /** Shows each problem at its field (the first card with one opens), and all in the summary at the top, linked to their fields. */
  showIssues(issues: readonly FieldMessage[], sent: PipelineInput): void {
    clearFieldErrors(this.editor.element);
    this.summaryTargets.clear();
    const cards = this.editor.orderedCards();
    const items = issues.map((issue) => {
      const container = this.containerFor(issue.field, cards, sent);
      if (!container) return h('li', {}, issue.message);
      const target = showFieldError(container, atField(container, issue.message)) ?? container;
      const item = h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => this.reveal(target) }, issue.message));
      this.summaryTargets.set(item, container);
      return item;
    });
    const first = cards.find((card) => card.element.querySelector('[data-test="field-error"]'));
    if (first) this.editor.expand(first);
    replace(this.summary, h('strong', {}), h('ul', {}, items));
    this.countSummary();
    this.summary.hidden = false;
    this.summary.focus();
  }

  /** Drops the problems fixed at their fields from the summary, which goes when none is left. */
  private countSummary(): void {
    for (const [item, container] of this.summaryTargets) if (!container.querySelector('[data-test="field-error"]')) item.remove();
    const count = this.summary.querySelectorAll('li').length;
    this.summary.querySelector('strong')!.textContent = `Not saved: ${count} problem${count === 1 ? '' : 's'}.`;
    if (count === 0) this.summary.hidden = true;
  }

  /** Opens the card holding `target`, then focuses it. */
  reveal(target: HTMLElement): void {
    const card = this.editor.cards.get(target.closest<HTMLElement>('.step-card')!);
    if (card) this.editor.expand(card);
    target.focus();
  }

  /**
   * Shows each warning at its field in amber (replacing the warnings shown before); a warning
   * whose field is not on the form is left out. Warnings never mark a field invalid.
   */
  showWarnings(warnings: readonly FieldMessage[], sent: PipelineInput): void {
    clearFieldWarnings(this.editor.element);
    const cards = this.editor.orderedCards();
    for (const warning of warnings) {
      const container = this.containerFor(warning.field, cards, sent);
      if (container) showFieldWarning(container, warning.message);
    }
  }

  /**
   * Replaces what `container` (one field, after it lost focus) shows with the problems and
   * warnings of a check that belong to it.
   */
  showFieldCheck(container: HTMLElement, check: { problems: readonly FieldMessage[]; warnings: readonly FieldMessage[] }, sent: PipelineInput): void {
    const cards = this.editor.orderedCards();
    const mine = (messages: readonly FieldMessage[]) => messages.filter((message) => this.containerFor(message.field, cards, sent) === container);
    clearFieldErrors(container);
    clearFieldWarnings(container);
    for (const problem of mine(check.problems)) showFieldError(container, atField(container, problem.message));
    for (const warning of mine(check.warnings)) showFieldWarning(container, warning.message);
    if (!this.summary.hidden) this.countSummary();
  }

  private containerFor(path: string, cards: StepCard[], sent: PipelineInput): HTMLElement | null {
    if (!path) return null;
    const segments = path.split('.');
    let scope: HTMLElement = this.editor.form;
    let rest = segments;
    if (segments[0] === 'steps' && segments.length > 1) {
      const key = segments[1]!;
      const index = key.startsWith('#') ? Number(key.slice(1)) - 1 : sent.steps.findIndex((step) => step.id === key);
      const card = cards[index];
      if (!card) return null;
      scope = card.element;
      rest = segments.slice(2);
      if (rest.length === 0) return card.element.querySelector<HTMLElement>('.step-errors');
    }
    // `env.TOKEN` goes to the env rows, `variables.x` to the variables: the longest known prefix.
    for (let length = rest.length; length > 0; length -= 1) {
      const name = rest.slice(0, length).join('.');
      const found = Array.from(scope.querySelectorAll<HTMLElement>(`[data-field="${CSS.escape(name)}"]`)).find((element) =>
        scope === this.editor.form ? !element.closest('.step-card') || name === 'steps' : true);
      if (found) return found;
    }
    return scope === this.editor.form ? null : scope.querySelector<HTMLElement>('.step-errors');
  }

  clearIssues(): void {
    clearFieldErrors(this.editor.element);
    this.summary.hidden = true;
  }
}
