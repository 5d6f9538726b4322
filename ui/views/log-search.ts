// Search in a log (log-view.ts): the field, the match count and the earlier/later buttons.
//
// Search runs on the server over the whole log, for small logs too: one code path, and the window
// may hold only part of even a small log once live lines pushed its start out. Each match is shown
// in its context (the lines around it), with the match count and earlier/later buttons. As in a
// browser: the first match first, Enter the next, Shift-Enter the previous, wrapping at the ends
// (a search with over 1,000 matches starts at the first of the last 1,000 the server gave, and
// reads earlier ones as Shift-Enter reaches them).

import type { LogLine, LogPage } from '../../src/core/api';
import { h } from '../dom';

/** Matches per search read. */
const pageLines = 1000;

/** What the search needs from the log view. */
interface LogSearchHost {
  /** A page of the log shown, or undefined when it failed (said in the view) or another log is shown now. */
  read(page: LogPage): Promise<LogLine[] | undefined>;
  /** Renders the lines again (their marks changed), keeping the reader's place. */
  refresh(): void;
  /** Shows line `n` in the middle of the view, unless search `asked` is no longer the latest. */
  reveal(n: number, asked: number): Promise<void>;
}

export class LogSearch {
  /** The search field, its match count and buttons: the run page puts them in its toolbar. */
  readonly controls: HTMLElement;
  /** The query, in lower case ('' none). */
  query = '';
  /** Counts searches: a read for an earlier one is dropped. */
  searches = 0;
  private readonly input = h('input', { type: 'search', placeholder: 'Search log', 'aria-label': 'Search log', 'data-test': 'log-search' });
  private readonly matchCount = h('span', { class: 'meta log-match-count', 'aria-live': 'polite', 'data-test': 'log-match-count' });
  private readonly earlierMatch = h('button', { type: 'button', title: 'Previous match (Shift+Enter)', 'aria-label': 'Previous match', disabled: true, 'data-test': 'log-match-earlier', onclick: () => this.moveMatch(-1) }, '↑');
  private readonly laterMatch = h('button', { type: 'button', title: 'Next match (Enter)', 'aria-label': 'Next match', disabled: true, 'data-test': 'log-match-later', onclick: () => this.moveMatch(1) }, '↓');
  /** The numbers of the matches read (ascending), how many earlier ones are not read yet, the one shown. */
  private matches: number[] = [];
  private matchesBefore = 0;
  private hit = -1;
  /** The moves between matches asked for, one after the other. */
  private moves = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: LogSearchHost) {
    this.controls = h('span', { class: 'log-search' }, this.input, this.earlierMatch, this.laterMatch, this.matchCount);
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.search(), 300);
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return;
      event.preventDefault();
      if (this.query !== this.input.value.trim().toLowerCase()) void this.search();
      else this.moveMatch(event.shiftKey ? -1 : 1);
    });
  }

  /** The number of the match shown, if any. */
  get hitLine(): number | undefined {
    return this.matches[this.hit];
  }

  /** Forgets the query and its matches (another log is shown); the field keeps its text. */
  reset(): void {
    Object.assign(this, { query: '', matches: [], matchesBefore: 0, hit: -1 });
    this.renderCount();
  }

  /** Runs the search in the field again when it has text the latest search did not run (after a reset). */
  resume(): void {
    if (this.input.value.trim() && !this.query) void this.search();
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  /** Reads the last matches of the query on the server, then shows the first of them. */
  private async search(): Promise<void> {
    clearTimeout(this.timer);
    const query = this.input.value.trim();
    const asked = ++this.searches;
    Object.assign(this, { query: query.toLowerCase(), matches: [], matchesBefore: 0, hit: -1 });
    this.host.refresh();
    this.renderCount();
    if (!query) return;
    this.matchCount.textContent = 'Searching…';
    const found = await this.host.read({ search: query, limit: pageLines });
    if (!found || asked !== this.searches) return;
    this.matches = found.flatMap((line) => (line.n === undefined ? [] : [line.n]));
    this.matchesBefore = found[0]?.skipped ?? 0;
    await this.goToMatch(0);
  }

  /** The next (1) or previous (-1) match; past either end to the other, once every match is read. */
  private moveMatch(delta: 1 | -1): void {
    this.moves = this.moves.then(() => {
      const count = this.matches.length;
      const wraps = this.matchesBefore === 0 && count > 1;
      return this.goToMatch(wraps ? (this.hit + delta + count) % count : this.hit + delta);
    });
  }

  /** Shows match `index` (of those read; -1 reads the earlier ones first) with the lines around it. */
  private async goToMatch(index: number): Promise<void> {
    const asked = this.searches;
    if (index < 0 && this.matchesBefore > 0) {
      const found = await this.host.read({ search: this.query, before: this.matches[0], limit: pageLines });
      if (!found || asked !== this.searches) return;
      const earlier = found.flatMap((line) => (line.n === undefined ? [] : [line.n]));
      this.matches = earlier.concat(this.matches);
      this.matchesBefore = found[0]?.skipped ?? 0;
      index += earlier.length;
    }
    const n = this.matches[index];
    if (n === undefined) return this.renderCount();
    this.hit = index;
    this.renderCount();
    await this.host.reveal(n, asked);
  }

  private renderCount(): void {
    const total = this.matchesBefore + this.matches.length;
    this.matchCount.textContent = !this.query ? '' : total === 0 ? 'No matches' : `${(this.matchesBefore + this.hit + 1).toLocaleString()} of ${total.toLocaleString()}`;
    const wraps = this.matchesBefore === 0 && this.matches.length > 1;
    this.earlierMatch.disabled = !wraps && this.hit <= 0 && this.matchesBefore === 0;
    this.laterMatch.disabled = this.hit < 0 || (!wraps && this.hit >= this.matches.length - 1);
  }

  /** Puts `text` into `element`, each match of the query marked; the pieces are text nodes, never HTML. */
  markMatches(element: HTMLElement, text: string): void {
    const lower = this.query ? text.toLowerCase() : '';
    if (!this.query || !lower.includes(this.query)) {
      element.textContent = text || '\u200b';
      return;
    }
    let from = 0;
    for (let at = lower.indexOf(this.query); at >= 0; at = lower.indexOf(this.query, from)) {
      if (at > from) element.appendChild(document.createTextNode(text.slice(from, at)));
      element.appendChild(h('mark', {}, text.slice(at, at + this.query.length)));
      from = at + this.query.length;
    }
    if (from < text.length) element.appendChild(document.createTextNode(text.slice(from)));
  }
}
