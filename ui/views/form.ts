// Small form helpers shared by the Pipelines, Pipeline editor and Projects screens: labelled
// fields with an error slot, key/value rows, busy buttons, validation messages mapped to fields,
// and a text download. Text always goes in through textContent (via `h`).

import { fieldsOf } from '../call-error';
import { h } from '../dom';

let uniqueCounter = 0;
/** An id unique in the document, for aria-describedby and label links. */
export function uniqueId(prefix: string): string {
  uniqueCounter += 1;
  return `${prefix}-${uniqueCounter}`;
}

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/**
 * A labelled field: `<label class="field"><span>Label</span>control<hint/></label>`. The label
 * carries `data-field` (the path its validation messages use, relative to its scope), so
 * `showFieldError` can find it.
 */
export function field(label: string, control: HTMLElement, options: { field?: string; hint?: string; wide?: boolean; extra?: HTMLElement } = {}): HTMLLabelElement {
  const hint = options.hint ? h('small', { class: 'meta', id: uniqueId('hint') }, options.hint) : null;
  if (hint) control.setAttribute('aria-describedby', hint.id);
  const row = options.extra ? h('span', { class: 'field-row' }, control, options.extra) : control;
  return h('label', { class: `field${options.wide ? ' wide' : ''}`, 'data-field': options.field }, h('span', {}, label), row, hint);
}

/** A checkbox with its label on the right. */
export function checkbox(label: string, checked: boolean, attributes: Record<string, string> = {}): { element: HTMLLabelElement; input: HTMLInputElement } {
  const input = h('input', { type: 'checkbox', ...attributes });
  input.checked = checked;
  return { element: h('label', { class: 'check', 'data-field': attributes['data-key'] }, input, h('span', {}, label)), input };
}

export function textInput(value: string | number | undefined, attributes: Record<string, string | boolean> = {}): HTMLInputElement {
  const input = h('input', { type: 'text', ...attributes });
  input.value = value === undefined ? '' : String(value);
  return input;
}

export function textArea(value: string | undefined, attributes: Record<string, string | number> = {}): HTMLTextAreaElement {
  const area = h('textarea', { rows: 4, ...attributes });
  area.value = value ?? '';
  return area;
}

/** A select whose options are `[value, label]` pairs; `value` is selected when present. */
export function selectInput(choices: [string, string][], value: string | undefined, attributes: Record<string, string> = {}): HTMLSelectElement {
  const select = h('select', attributes, choices.map(([optionValue, label]) => h('option', { value: optionValue }, label)));
  // No value, or none offered: the first choice stays selected.
  if (!value && !choices.some(([optionValue]) => optionValue === '')) return select;
  select.value = value ?? '';
  if (select.value !== (value ?? '') && value) {
    // A value that is no longer offered (a deleted harness) stays visible instead of vanishing.
    select.appendChild(h('option', { value }, `${value} (unknown)`));
    select.value = value;
  }
  return select;
}

/**
 * Editable key/value rows (pipeline variables, step environment, run variables) as a fieldset
 * with a legend, one row per entry, a Remove button per row and an Add button.
 */
export function keyValueEditor(legend: string, entries: Record<string, string> | undefined, options: { keyLabel: string; addLabel: string; field?: string; onChange?: () => void; keysReadOnly?: boolean }): { element: HTMLFieldSetElement; read(): Record<string, string> } {
  const rows = h('div', { class: 'kv-rows' });
  const empty = h('p', { class: 'meta kv-empty' }, 'None.');
  const addRow = (key: string, value: string, focus: boolean) => {
    const keyInput = textInput(key, { 'aria-label': options.keyLabel, class: 'kv-key', placeholder: options.keyLabel, spellcheck: 'false' });
    if (options.keysReadOnly) keyInput.readOnly = true;
    const valueInput = textInput(value, { 'aria-label': `Value of ${key || 'new entry'}`, class: 'kv-value', placeholder: 'value' });
    keyInput.addEventListener('input', () => valueInput.setAttribute('aria-label', `Value of ${keyInput.value || 'new entry'}`));
    const remove = h('button', { type: 'button', class: 'icon', 'aria-label': `Remove ${key || 'entry'}`, title: 'Remove', 'data-action': 'kv-remove' }, '✕');
    const row = h('div', { class: 'kv-row' }, keyInput, valueInput, options.keysReadOnly ? null : remove);
    rows.appendChild(row);
    empty.hidden = true;
    if (focus) keyInput.focus();
  };
  rows.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('[data-action="kv-remove"]');
    if (!button) return;
    const row = button.closest('.kv-row')!;
    const next = row.nextElementSibling ?? row.previousElementSibling;
    row.remove();
    empty.hidden = rows.children.length > 0;
    (next?.querySelector('input') as HTMLInputElement | null)?.focus();
    options.onChange?.();
  });
  for (const [key, value] of Object.entries(entries ?? {})) addRow(key, value, false);
  empty.hidden = rows.children.length > 0;
  const add = h('button', { type: 'button', class: 'small', onclick: () => { addRow('', '', true); options.onChange?.(); } }, options.addLabel);
  const element = h('fieldset', { class: 'kv', 'data-field': options.field }, h('legend', {}, legend), empty, rows, options.keysReadOnly ? null : add);
  return {
    element,
    read() {
      const result: Record<string, string> = {};
      for (const row of rows.querySelectorAll('.kv-row')) {
        const key = (row.querySelector('.kv-key') as HTMLInputElement).value.trim();
        const value = (row.querySelector('.kv-value') as HTMLInputElement).value;
        if (key) result[key] = value;
      }
      return result;
    },
  };
}

/**
 * Runs `action` with `button` disabled and showing `busyText`; restores the button afterwards
 * whatever happens. Returns the action's promise.
 */
export async function withBusy<T>(button: HTMLButtonElement, busyText: string, action: () => Promise<T>): Promise<T> {
  const label = button.textContent;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.textContent = busyText;
  try {
    return await action();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.textContent = label;
  }
}

interface FieldIssue {
  /** '' when the problem names no field. */
  field: string;
  message: string;
}

/**
 * Every problem of a failed call, for a form: the field problems it carried (CallError `fields`),
 * then each other line of its message (a heading such as "Project not saved:", a problem that
 * names no field) with an empty field. The message is words only; the paths come from `fields`.
 */
export function problemsOf(error: unknown): FieldIssue[] {
  const fields = fieldsOf(error);
  const carried = new Set(fields.map((problem) => problem.message.trim()));
  const text = error instanceof Error ? error.message : String(error);
  const others = text.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !carried.has(line));
  return [...fields, ...others.map((message) => ({ field: '', message }))];
}

/**
 * Puts each problem of a failed call where `place` can (it returns true when it showed the problem
 * at a field) and returns the lines left for the form's general message. Once any problem sits at
 * its field, a heading line ending in `:` ("Trigger not saved:") alone says nothing and is dropped.
 */
export function placeProblems(error: unknown, place: (problem: FieldIssue) => boolean): string[] {
  const rest: FieldIssue[] = [];
  let placed = false;
  for (const problem of problemsOf(error)) {
    if (problem.field && place(problem)) placed = true;
    else rest.push(problem);
  }
  return rest.filter((problem) => !placed || problem.field || !problem.message.endsWith(':')).map((problem) => problem.message);
}

/** Removes every field error and aria-invalid mark under `root`. */
export function clearFieldErrors(root: HTMLElement): void {
  for (const element of root.querySelectorAll('.field-error[data-test="field-error"]')) element.remove();
  for (const element of root.querySelectorAll('[aria-invalid="true"]')) element.removeAttribute('aria-invalid');
}

/**
 * Shows `message` at a field container (a `[data-field]` label or fieldset): the message goes at
 * its end, and its controls are marked aria-invalid and described by the message. Returns the
 * first control, to focus.
 */
export function showFieldError(container: HTMLElement, message: string): HTMLElement | null {
  const error = h('p', { class: 'field-error', 'data-test': 'field-error', id: uniqueId('error') }, message);
  container.appendChild(error);
  const controls = container.matches('input, select, textarea') ? [container] : Array.from(container.querySelectorAll<HTMLElement>('input, select, textarea'));
  for (const control of controls as Control[]) {
    control.setAttribute('aria-invalid', 'true');
    const described = control.getAttribute('aria-describedby');
    control.setAttribute('aria-describedby', described ? `${described} ${error.id}` : error.id);
  }
  return controls[0] ?? null;
}

/** Offers `text` as a file download named `filename`. */
export function downloadText(filename: string, text: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h('a', { href: url, download: filename, hidden: true });
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** A file-name-safe form of `name` (letters, digits, spaces, - _ . kept). */
export function safeFileName(name: string): string {
  return name.replace(/[^\p{L}\p{N} ._-]+/gu, '-').replace(/^[.\s-]+|[.\s-]+$/g, '').slice(0, 100) || 'pipeline';
}
