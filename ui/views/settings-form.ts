// Shared helpers of the configuration screens (Triggers, Harnesses, Channels, Settings): labelled
// fields that can show a validation error where it belongs, buttons that show progress while their
// action runs, copying to the clipboard, and random secrets. Text goes in only through textContent.

import { h, replace } from '../dom';
import { errorElement } from './error-details';
import { keyValueEditor, placeProblems } from './form';

let nextId = 0;
/** A document-unique id for aria-describedby and label targets. */
export function uniqueId(prefix: string): string {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

interface FieldEntry {
  controls: HTMLElement[];
  message: HTMLElement;
}

/**
 * The fields of one form and their error messages. A refused call arrives as a CallError whose
 * `fields` name each problem's field (a dotted path such as `webhookServer.port`); `showError` puts
 * each problem at the field registered under that name or the nearest parent name, and every other
 * line of the message in the form's general message.
 */
export class FormFields {
  private readonly fields = new Map<string, FieldEntry>();
  /** Errors that belong to no field; place it near the form's buttons. */
  readonly general = h('p', { class: 'field-error form-error', role: 'alert', hidden: true });

  /**
   * A labelled control: `<label><span>Label</span>control<small>hint</small><error/></label>`.
   * `name` is the field name the engine uses in its validation issues.
   */
  field(name: string, label: string, control: Control | HTMLElement, hint?: string): HTMLLabelElement {
    const message = this.register(name, control);
    return h('label', { class: 'form-field' },
      h('span', {}, label),
      control,
      hint ? h('small', { class: 'meta' }, hint) : null,
      message);
  }

  /**
   * A group of controls under one caption (checkboxes, a row of inputs): a fieldset whose legend
   * names it, with the error message under it.
   */
  group(name: string, legend: string, content: HTMLElement | HTMLElement[], hint?: string): HTMLFieldSetElement {
    const fieldset = h('fieldset', { class: 'form-group' }, h('legend', {}, legend), content, hint ? h('small', { class: 'meta' }, hint) : null);
    fieldset.appendChild(this.register(name, fieldset));
    return fieldset;
  }

  /** Registers a control under `name` and returns the element that shows its error. */
  register(name: string, control: HTMLElement): HTMLElement {
    const id = uniqueId('error');
    const existing = this.fields.get(name);
    const message = h('small', { class: 'field-error', id, hidden: true });
    if (existing) existing.controls.push(control);
    else this.fields.set(name, { controls: [control], message });
    const describedBy = control.getAttribute('aria-describedby');
    control.setAttribute('aria-describedby', describedBy ? `${describedBy} ${id}` : id);
    return existing ? h('span', { hidden: true }) : message;
  }

  /** Removes every shown error. */
  clear(): void {
    for (const entry of this.fields.values()) {
      entry.message.hidden = true;
      entry.message.textContent = '';
      for (const control of entry.controls) control.removeAttribute('aria-invalid');
    }
    this.general.hidden = true;
    this.general.textContent = '';
  }

  /**
   * Shows a failed call: each problem it carried (CallError `fields`) at its field, the rest of its
   * words in `general`. Focuses the first field in error. Returns true when a problem found a field.
   */
  showError(error: unknown): boolean {
    this.clear();
    const placed: HTMLElement[] = [];
    const rest = placeProblems(error, (problem) => {
      const entry = this.find(problem.field);
      if (!entry) return false;
      entry.message.hidden = false;
      entry.message.textContent = entry.message.textContent ? `${entry.message.textContent} ${problem.message}` : problem.message;
      for (const control of entry.controls) control.setAttribute('aria-invalid', 'true');
      placed.push(...entry.controls.slice(0, 1));
      return true;
    });
    if (rest.length > 0) {
      this.general.hidden = false;
      this.general.textContent = rest.join('\n');
    }
    const first = placed[0];
    if (first) (first.matches('input, select, textarea') ? first : first.querySelector<HTMLElement>('input, select, textarea') ?? first).focus();
    return placed.length > 0;
  }

  /** The entry for `field`, or for its nearest registered parent (`variables.KEY` → `variables`). */
  private find(field: string): FieldEntry | undefined {
    const parts = field.split('.');
    for (let length = parts.length; length > 0; length--) {
      const entry = this.fields.get(parts.slice(0, length).join('.'));
      if (entry) return entry;
    }
    return undefined;
  }
}

/** One busy-button helper for every screen (defined beside the other form helpers). */
export { withBusy } from './form';

/** Copies text: the async clipboard when allowed, else a selected hidden textarea. True when copied. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Denied or unavailable: fall through to the selection copy.
  }
  const area = h('textarea', { class: 'offscreen', readonly: true, 'aria-hidden': 'true' });
  area.value = text;
  document.body.appendChild(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  area.remove();
  return copied;
}

/** 24 random bytes as base64url (32 characters): a webhook secret. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The non-empty trimmed lines of a textarea. */
export function lines(text: string): string[] {
  return text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
}

/** A checkbox shown as an on/off switch, with its label. */
export function switchControl(label: string, checked: boolean, attributes: Record<string, string> = {}): { element: HTMLLabelElement; input: HTMLInputElement } {
  const input = h('input', { type: 'checkbox', role: 'switch', ...attributes });
  input.checked = checked;
  return { element: h('label', { class: 'switch' }, input, h('span', {}, label)), input };
}

/** An <option>; `selected` when it matches `current`. */
export function option(value: string, text: string, current?: string): HTMLOptionElement {
  const element = h('option', { value }, text);
  if (value === current) element.selected = true;
  return element;
}

/**
 * Editable name = value rows (trigger variables): the pipeline editor's editor (form.ts
 * keyValueEditor), one "Add variable" everywhere, without its own legend (the form's group has
 * one). `read()` returns the rows with a name; an empty list gives `{}`.
 */
export function variablesEditor(initial: Record<string, string> | undefined): { element: HTMLElement; read(): Record<string, string> } {
  const editor = keyValueEditor('Variables', initial, { keyLabel: 'Variable name', addLabel: 'Add variable' });
  editor.element.querySelector('legend')?.remove();
  return { element: h('div', { class: 'kv kv-bare' }, ...editor.element.childNodes), read: editor.read };
}

/** An inline result line after a test: "✓ sent" or "✕ error text". */
export function resultLine(element: HTMLElement, ok: boolean, text: string): void {
  element.hidden = false;
  element.className = ok ? 'test-result ok' : 'test-result error';
  if (ok) element.textContent = `✓ ${text}`;
  else replace(element, errorElement(text, 'test-error', '✕ '));
}
