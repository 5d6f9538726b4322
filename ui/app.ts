// The renderer's shared state and the contract every screen follows.
//
// A screen is a function `(context, params) => Screen`: it builds its own DOM (the view), joins
// it to the API (the controller), and refreshes itself in `update()` when the state changes. The
// shell (main.ts) owns the layout, the navigation and the routes.

import type { FactoryApi, InboxItem, Run, Snapshot } from '../src/core/api';
import { h } from './dom';

/** Runs kept in the list: as many as a snapshot carries (`snapshotRunCount`; ui/ imports only types). */
const runListLength = 300;
/** How long a toast with Undo stays, and so how long its action is held back. */
export const undoWindowMs = 6000;

export interface Screen {
  /** The screen's root element, placed in the main column. */
  element: HTMLElement;
  /** Called after the state changed (snapshot, runs, inbox). Cheap: re-render what changed. */
  update?(): void;
  /** Called when the user leaves the screen: stop timers, unsubscribe. */
  dispose?(): void;
}

export interface AppContext {
  api: FactoryApi;
  state: AppState;
  /** True in the desktop window (desktop-only actions are shown); false in a browser. */
  desktop: boolean;
  navigate(path: string): void;
  /** A short message at the bottom of the window: success, or an error that has no field; with `undo`, an Undo button for `undoWindowMs`. */
  toast(message: string, kind?: 'ok' | 'error', undo?: () => void): void;
}

export type ScreenFactory = (context: AppContext, params: Record<string, string>) => Screen;

/** The latest snapshot, kept current by the events. */
export class AppState {
  snapshot: Snapshot | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly api: FactoryApi) {}

  /** Reads a fresh snapshot (at start, and after the event stream had a gap). */
  async refresh(): Promise<void> {
    this.snapshot = await this.api.snapshot();
    this.changed();
  }

  /** Starts following the events. */
  follow(): void {
    this.api.on('snapshot', (snapshot) => {
      this.snapshot = snapshot;
      this.changed();
    });
    this.api.on('run', (run) => this.putRun(run));
    this.api.on('run-deleted', (id) => {
      if (!this.snapshot) return;
      this.snapshot.runs = this.snapshot.runs.filter((run) => run.id !== id);
      this.changed();
    });
    this.api.on('inbox', (item) => this.putInboxItem(item));
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private putRun(run: Run): void {
    if (!this.snapshot) return;
    const runs = this.snapshot.runs;
    const index = runs.findIndex((candidate) => candidate.id === run.id);
    if (index >= 0) runs[index] = run;
    else {
      runs.unshift(run);
      // Like the snapshot, only the latest runs: a burst of webhooks must not grow the list without end.
      if (runs.length > runListLength) {
        runs.sort((left, right) => right.createdAt - left.createdAt);
        runs.length = runListLength;
      }
    }
    this.changed();
  }

  private putInboxItem(item: InboxItem): void {
    if (!this.snapshot) return;
    this.snapshot.inbox = [item, ...this.snapshot.inbox.filter((candidate) => candidate.id !== item.id)].slice(0, 100);
    this.changed();
  }

  private scheduled = false;
  /** Listeners run once per animation frame, however many events came in (a screen that changed the snapshot in place calls it too). */
  changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const listener of this.listeners) listener();
    });
  }
}

export const statusGlyphs: Record<string, string> = {
  queued: '○', pending: '○', running: '◔', waiting: '‖', succeeded: '✓', failed: '✕', cancelled: '⊘', rejected: '⊘', skipped: '–',
};

/** A status pill: colour AND glyph AND word, so colour is never the only signal. */
export function statusLabel(status: string): { glyph: string; text: string; className: string } {
  return { glyph: statusGlyphs[status] ?? '•', text: status, className: `status status-${status}` };
}

/** The message of a failed call, for a toast or a field. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A link to an issue or page outside Factory: the desktop app opens it in the browser
 * (`openExternal`, http and https only), a browser in a new tab. Anything else is plain text.
 */
export function externalLink(context: AppContext, url: string | undefined, text: string, className = 'external'): HTMLElement {
  if (!url || !/^https?:\/\//i.test(url)) return h('span', { class: className }, text);
  if (!context.desktop) return h('a', { href: url, class: className, target: '_blank', rel: 'noopener noreferrer' }, text);
  return h('a', { href: url, class: className, onclick: (event: Event) => {
    event.preventDefault();
    context.api.openExternal(url).catch((error: unknown) => context.toast(`Could not open the link: ${errorText(error)}`, 'error'));
  } }, text);
}
