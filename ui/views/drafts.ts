// Drafts: nothing a person typed is lost (UI.md). One registry of the forms on screen, consulted
// by the router (main.ts) before a screen goes and by the window before it closes.
//
// A form joins with `watchForm`; it is dirty while its controls hold something else than when it
// joined or was last saved (`saved()`), or while its own `dirty()` says so. When the person leaves
// a screen that holds a dirty form, the screen is kept as it is (not disposed) and shown again,
// draft and all, when its address is opened again in this session. Inside a screen, an editor
// replaced by another is kept per item (`DraftShelf`: triggers, channels) or asks first
// (`mayDiscard`: harnesses, projects). Closing the window with any draft asks (beforeunload).
// Drafts stay in memory: a typed key or secret never reaches storage.

import type { Screen } from '../app';
import { h } from '../dom';
import { confirmAction } from './dialog';

export interface Draft {
  /** True while the form holds changes that are not saved. */
  isDirty(): boolean;
  /** The form's content is saved: what it holds now is the new starting point. */
  saved(): void;
  /** The form is gone without a draft (cancelled, discarded, replaced): it no longer counts. */
  forget(): void;
  /** Shows "Unsaved changes kept from before" with Discard at the top of the form (a kept draft, shown again). */
  showKept(discard: () => void): void;
}

interface WatchedForm {
  form: HTMLElement;
  /** The screen the form belongs to (the screen shown when it joined). */
  screen: number;
  baseline: string;
  dirty?: () => boolean;
  handle?: Draft;
}

const watched = new Set<WatchedForm>();
let currentScreen = 0;
let screenCount = 0;

/**
 * What the form's controls hold, as one string: each input, select and textarea in order (a
 * checkbox's state, a select's chosen options), so added rows and a changed kind count too.
 * Controls marked `data-draft="skip"` (switches that apply at once) are not part of a draft.
 */
export function formValues(form: HTMLElement): string {
  const values: string[] = [];
  for (const control of form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea')) {
    if (control.dataset.draft === 'skip' || control.type === 'button' || control.type === 'submit') continue;
    if (control instanceof HTMLInputElement && (control.type === 'checkbox' || control.type === 'radio')) values.push(control.checked ? '1' : '0');
    else if (control instanceof HTMLSelectElement && control.multiple) values.push([...control.selectedOptions].map((option) => option.value).join(','));
    else values.push(control.value);
  }
  return values.join('\u0000');
}

/**
 * Watches `form` (of the screen shown now). `dirty` replaces the comparison of values for a form
 * that knows better (the pipeline editor).
 */
export function watchForm(form: HTMLElement, options: { dirty?: () => boolean } = {}): Draft {
  const entry: WatchedForm = { form, screen: currentScreen, baseline: formValues(form), ...options };
  watched.add(entry);
  const note = h('p', { class: 'draft-note', role: 'status', 'data-test': 'draft-note' });
  const isDirty = () => watched.has(entry) && dirtyEntry(entry);
  return entry.handle = {
    isDirty,
    saved() {
      entry.baseline = formValues(form);
      note.remove();
    },
    forget() {
      watched.delete(entry);
      note.remove();
    },
    showKept(discard) {
      const discardButton = h('button', { type: 'button', class: 'link-button', 'data-test': 'draft-discard' }, 'Discard');
      discardButton.addEventListener('click', () => {
        note.remove();
        discard();
      });
      note.replaceChildren('Unsaved changes, kept from before. ', discardButton);
      // At the top, under the heading when there is one (inside a form that comes first).
      let host = form;
      while (host.firstElementChild instanceof HTMLFormElement) host = host.firstElementChild;
      const heading = host.firstElementChild?.matches('h1, h2, h3') ? host.firstElementChild : null;
      if (heading) heading.after(note);
      else host.prepend(note);
      // Typing on goes on with the draft; once it is saved or back as it was, the note goes.
      const clear = () => {
        if (!isDirty()) note.remove();
      };
      form.addEventListener('input', clear);
      form.addEventListener('change', clear);
    },
  };
}

const entriesOf = (screen: number) => [...watched].filter((entry) => entry.screen === screen);
const dirtyEntry = (entry: WatchedForm) => (entry.dirty ? entry.dirty() : formValues(entry.form) !== entry.baseline);

/** True when any form, shown or kept, holds a draft: closing the window would lose it. */
function hasDrafts(): boolean {
  return [...watched].some(dirtyEntry);
}

/**
 * The screens of the router: the one shown, and those kept with a draft (by address). Leaving a
 * screen keeps it when it holds a draft (it is not disposed: a generation or a check may finish
 * into it) and disposes it otherwise; opening an address kept before shows that screen again.
 */
export class ScreenKeeper {
  private shown: { screen: Screen; hash: string; id: number } | undefined;
  private readonly kept = new Map<string, { screen: Screen; id: number }>();

  /** Leaves the shown screen: kept when it holds a draft, else disposed and its forms forgotten. */
  leave(): void {
    const shown = this.shown;
    this.shown = undefined;
    if (!shown) return;
    if (entriesOf(shown.id).some(dirtyEntry)) {
      this.kept.set(shown.hash.split('?')[0]!, { screen: shown.screen, id: shown.id });
      return;
    }
    for (const entry of entriesOf(shown.id)) watched.delete(entry);
    shown.screen.dispose?.();
  }

  /**
   * The screen for `hash`: the one kept there (refreshed, its drafts marked, Discard makes it
   * anew through `rebuild`), or a new one from `make`. Call `leave()` first.
   */
  open(hash: string, make: () => Screen, rebuild: () => void): Screen {
    const path = hash.split('?')[0]!;
    const kept = this.kept.get(path);
    this.kept.delete(path);
    if (kept) {
      currentScreen = kept.id;
      this.shown = { screen: kept.screen, hash, id: kept.id };
      kept.screen.update?.();
      for (const entry of entriesOf(kept.id)) {
        if (!dirtyEntry(entry) || entry.form.querySelector('[data-test="draft-note"]') || !kept.screen.element.contains(entry.form)) continue;
        entry.handle!.showKept(() => {
          // Discard: the screen as it would open with nothing kept.
          for (const entry of entriesOf(kept.id)) watched.delete(entry);
          this.shown = undefined;
          kept.screen.dispose?.();
          rebuild();
        });
      }
      return kept.screen;
    }
    currentScreen = ++screenCount;
    const screen = make();
    this.shown = { screen, hash, id: currentScreen };
    return screen;
  }
}

/**
 * The editor of a list screen (triggers, channels), and the editors left with a draft, kept per
 * item: switching from one trigger to another keeps what was typed in the first, and opening it
 * again shows it as it was left.
 */
export class DraftShelf<Editor extends { element: HTMLElement }> {
  private readonly kept = new Map<string, { editor: Editor; draft: Draft }>();
  private shown: { key: string; editor: Editor; draft: Draft } | undefined;

  /**
   * Puts the editor of `key` in place of the one shown (none for undefined, or when `make` gives
   * none). `keep` (the person switched): the editor left stays on the shelf while its form holds a
   * draft, and the one kept for `key` comes back with "Unsaved changes, kept from before" (its
   * Discard calls `discard`); else the one left is forgotten and `make` builds a new one.
   */
  open(key: string | undefined, keep: boolean, make: () => Editor | undefined, discard: () => void): { editor: Editor; kept: boolean } | undefined {
    const left = this.shown;
    this.shown = undefined;
    if (left && keep && left.draft.isDirty()) this.kept.set(left.key, left);
    else left?.draft.forget();
    const kept = keep && key !== undefined ? this.kept.get(key) : undefined;
    if (kept) this.kept.delete(key!);
    const editor = kept?.editor ?? (key === undefined ? undefined : make());
    if (!editor) return undefined;
    this.shown = { key: key!, editor, draft: kept?.draft ?? watchForm(editor.element) };
    if (kept) kept.draft.showKept(discard);
    return { editor, kept: Boolean(kept) };
  }

  /** True when an editor left with a draft is kept for `key`. */
  has(key: string): boolean {
    return this.kept.has(key);
  }
}

/** True when `draft` may be replaced: it holds nothing unsaved, or the person chose to discard it. */
export async function mayDiscard(draft: Draft | undefined, question: string): Promise<boolean> {
  if (!draft?.isDirty()) return true;
  return confirmAction({ title: question, body: 'What you typed is lost.', confirm: 'Discard', danger: true, dismiss: 'Keep editing' });
}

/** Asks the window to confirm closing while any draft is held (the desktop window shows its own question). */
export function guardWindowClose(): void {
  window.addEventListener('beforeunload', (event) => {
    if (!hasDrafts()) return;
    event.preventDefault();
    event.returnValue = '';
  });
}
