// A log that stays smooth at 100,000 lines. The view keeps every line in memory but renders only
// a bounded window of them: the last `windowSize` lines (or, while searching, the last matches),
// with a "Show earlier" button that widens the window. New lines are queued and appended once per
// animation frame, however many arrive. Every line goes in through textContent.

import type { LogLine } from '../../src/core/api';
import { h } from '../dom';

/** How many lines the DOM holds at most before "Show earlier" is pressed. */
const windowStep = 2000;
/** Within this many pixels of the bottom, the reader is "at the end" and following. */
const bottomSlack = 24;

export interface LogViewOptions {
  /** Called when the reader scrolls away from the end (follow switches off) or back to it. */
  onFollowChange?(follow: boolean): void;
  /** Shown when there are no lines. */
  emptyText?: string;
}

export class LogView {
  readonly element: HTMLElement;
  private readonly output: HTMLElement;
  private readonly earlierButton: HTMLButtonElement;
  private readonly summary: HTMLElement;
  private lines: LogLine[] = [];
  private pending: LogLine[] = [];
  private frame = 0;
  private windowSize = windowStep;
  /** Lines currently in the DOM, oldest first (matches only while searching). */
  private rendered = 0;
  private query = '';
  private follow = true;
  private emptyText: string;

  constructor(private readonly options: LogViewOptions = {}) {
    this.emptyText = options.emptyText ?? 'No output yet.';
    this.output = h('div', { class: 'log log-output', role: 'log', 'aria-label': 'Log', tabindex: '0', 'data-test': 'log' });
    this.earlierButton = h('button', { type: 'button', class: 'log-earlier', hidden: true, onclick: () => this.showEarlier() });
    this.summary = h('p', { class: 'meta log-summary', 'aria-live': 'polite' });
    this.element = h('div', { class: 'log-view' }, this.earlierButton, this.output, this.summary);
    this.output.addEventListener('scroll', () => this.onScroll());
  }

  /** Replaces every line (a freshly read log). */
  setLines(lines: LogLine[]): void {
    this.cancelFrame();
    this.lines = lines.slice();
    this.pending = [];
    this.windowSize = windowStep;
    this.renderWindow();
  }

  /** Queues live lines; they reach the DOM at the next animation frame. */
  append(lines: LogLine[]): void {
    if (lines.length === 0) return;
    for (const line of lines) this.pending.push(line);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  /** All lines the view holds, rendered or not (for de-duplicating a read against live lines). */
  get allLines(): readonly LogLine[] {
    return this.lines;
  }

  setWrap(wrap: boolean): void {
    this.output.classList.toggle('wrap', wrap);
  }

  setFollow(follow: boolean): void {
    this.follow = follow;
    if (follow) this.scrollToEnd();
  }

  /** Shows only lines containing `query` (case-insensitive), with the matches marked. */
  setSearch(query: string): void {
    this.query = query.trim().toLowerCase();
    this.windowSize = windowStep;
    this.renderWindow();
  }

  setEmptyText(text: string): void {
    this.emptyText = text;
    if (this.lines.length === 0) this.renderWindow();
  }

  dispose(): void {
    this.cancelFrame();
  }

  private cancelFrame(): void {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  private matches(line: LogLine): boolean {
    return !this.query || line.line.toLowerCase().includes(this.query);
  }

  /** Rebuilds the DOM from the last `windowSize` visible lines. */
  private renderWindow(): void {
    const visible = this.query ? this.lines.filter((line) => this.matches(line)) : this.lines;
    const shown = visible.slice(Math.max(0, visible.length - this.windowSize));
    const fragment = document.createDocumentFragment();
    for (const line of shown) fragment.appendChild(this.lineElement(line));
    this.output.replaceChildren(fragment);
    this.rendered = shown.length;
    if (visible.length === 0) this.output.appendChild(h('div', { class: 'log-empty' }, this.query ? 'No line matches the search.' : this.emptyText));
    this.updateChrome(visible.length);
    if (this.follow) this.scrollToEnd();
  }

  private flush(): void {
    this.frame = 0;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const wasEmpty = this.rendered === 0;
    for (const line of batch) this.lines.push(line);
    const fresh = this.query ? batch.filter((line) => this.matches(line)) : batch;
    if (fresh.length > 0) {
      if (wasEmpty) this.output.replaceChildren();
      const fragment = document.createDocumentFragment();
      for (const line of fresh.slice(Math.max(0, fresh.length - this.windowSize))) fragment.appendChild(this.lineElement(line));
      this.output.appendChild(fragment);
      this.rendered += Math.min(fresh.length, this.windowSize);
      // Keep the DOM bounded: drop the oldest rendered lines beyond the window.
      while (this.rendered > this.windowSize && this.output.firstChild) {
        this.output.removeChild(this.output.firstChild);
        this.rendered -= 1;
      }
    }
    const total = this.query ? this.countMatches() : this.lines.length;
    this.updateChrome(total);
    if (this.follow) this.scrollToEnd();
  }

  private countMatches(): number {
    let count = 0;
    for (const line of this.lines) if (this.matches(line)) count += 1;
    return count;
  }

  private showEarlier(): void {
    const before = this.output.scrollHeight - this.output.scrollTop;
    this.windowSize += windowStep;
    const follow = this.follow;
    this.follow = false;
    this.renderWindow();
    this.follow = follow;
    // Keep the line that was at the top where it was.
    this.output.scrollTop = this.output.scrollHeight - before;
  }

  private updateChrome(total: number): void {
    const hidden = total - this.rendered;
    this.earlierButton.hidden = hidden <= 0;
    this.earlierButton.textContent = `Show earlier lines (${hidden.toLocaleString()} hidden)`;
    const noun = this.query ? 'matching lines' : 'lines';
    this.summary.textContent = total === 0 ? '' : `${total.toLocaleString()} ${noun}${hidden > 0 ? `, last ${this.rendered.toLocaleString()} shown` : ''}`;
  }

  private lineElement(line: LogLine): HTMLElement {
    const element = document.createElement('div');
    element.className = line.stream === 'err' ? 'log-line err' : line.stream === 'info' ? 'log-line info' : 'log-line';
    if (line.ts) element.title = new Date(line.ts).toLocaleTimeString();
    if (!this.query) {
      element.textContent = line.line || '\u200b';
      return element;
    }
    // Mark each match; the pieces are text nodes, never HTML.
    const lower = line.line.toLowerCase();
    let from = 0;
    for (let at = lower.indexOf(this.query); at >= 0; at = lower.indexOf(this.query, from)) {
      if (at > from) element.appendChild(document.createTextNode(line.line.slice(from, at)));
      const mark = document.createElement('mark');
      mark.textContent = line.line.slice(at, at + this.query.length);
      element.appendChild(mark);
      from = at + this.query.length;
    }
    if (from < line.line.length) element.appendChild(document.createTextNode(line.line.slice(from)));
    return element;
  }

  private scrollToEnd(): void {
    this.output.scrollTop = this.output.scrollHeight;
  }

  private onScroll(): void {
    const atEnd = this.output.scrollHeight - this.output.scrollTop - this.output.clientHeight <= bottomSlack;
    if (atEnd !== this.follow) {
      this.follow = atEnd;
      this.options.onFollowChange?.(atEnd);
    }
  }
}

/**
 * The live lines that a freshly read log does not already hold. A line is written to disk before
 * its `logs` event goes out (about 80 ms later), so the first live lines after a read may repeat
 * its last lines. `live` (every live line since the read began, in order) is matched against the
 * read: where its start lines up with a stretch of the read, that stretch is dropped.
 */
export function linesAfter(read: readonly LogLine[], live: readonly LogLine[]): LogLine[] {
  if (live.length === 0) return [];
  const same = (a: LogLine, b: LogLine) => a.line === b.line && a.stream === b.stream && a.ts === b.ts;
  for (let start = Math.max(0, read.length - 5000); start < read.length; start += 1) {
    const overlap = Math.min(live.length, read.length - start);
    let equal = true;
    for (let index = 0; index < overlap && equal; index += 1) equal = same(read[start + index]!, live[index]!);
    if (equal) return live.slice(read.length - start);
  }
  return live.slice();
}

/** A status glyph drawn by CSS, so the element's text stays the status word alone. */
export function glyphElement(glyph: string): HTMLElement {
  return h('span', { class: 'glyph', 'data-glyph': glyph, 'aria-hidden': 'true' });
}
