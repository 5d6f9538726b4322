// A log of any size, read a page at a time. The view holds a window of consecutive lines (at most
// `maxLines`, each with its number `n` in the log) and renders all of it. At the tail, live lines are
// appended once per animation frame while the reader follows: lines of a step attempt come with
// their numbers, so those the window holds are dropped exactly (the setup log's come without, and
// are matched with the last read by their text); after a flood's marker the tail is read again.
// Each line shows its number (a click on it links to it) and, on request, its time. Scrolling to
// the top (or "Load earlier") reads the page before the window; scrolling to the bottom of a
// window away from the tail reads the page after it, and rejoins the tail at the end. Every change
// keeps the line the reader looks at where it was. Every line goes in through textContent.
// Search in the log is log-search.ts's; matching live lines with a read, log-live-lines.ts's.

import type { LogLine, LogPage } from '../../src/core/api';
import { errorText } from '../app';
import { h } from '../dom';
import { linesAfter } from './log-live-lines';
import { LogSearch } from './log-search';

/** The most lines the window (and so the DOM) holds. */
const maxLines = 5000;
/** Lines read per page when scrolling. */
const pageLines = 1000;
/** Lines read around a search match that the window does not hold. */
const contextLines = 100;
/** Within this many pixels of the bottom, the reader is at the end (following, at the tail). */
const bottomSlack = 24;
/** Within this many pixels of the top, the page before the window is read. */
const topSlack = 200;

export interface LogViewOptions {
  /** Reads a page of the log shown. */
  read(page: LogPage): Promise<LogLine[]>;
  /** Reads the tail again and hands it to `showTail` (the reader went back to the end). */
  readTail(): void;
  /** Called when the reader scrolls away from the end (follow switches off) or back to it. */
  onFollowChange?(follow: boolean): void;
  /** Called when the reader clicks a line's number: a link to it. */
  onLineLink?(n: number): void;
}

export class LogView {
  readonly element: HTMLElement;
  /** The search field, its match count and buttons: the run page puts them in its toolbar. */
  readonly searchControls: HTMLElement;
  private readonly output: HTMLElement;
  private readonly body = h('div', { class: 'log-lines' });
  private readonly earlierText = h('span');
  private readonly earlierRow = h('div', { class: 'log-marker', 'data-test': 'log-earlier' }, this.earlierText, ' ', h('button', { type: 'button', onclick: () => void this.loadEarlier() }, 'Load earlier'));
  private readonly laterRow = h('div', { class: 'log-marker', hidden: true }, 'Later lines follow. ',
    h('button', { type: 'button', onclick: () => void this.loadLater() }, 'Load later'), ' ', h('button', { type: 'button', onclick: () => this.setFollow(true, true) }, 'Go to the end'));
  private readonly problem = h('p', { class: 'field-error', role: 'alert', hidden: true });
  private readonly finder = new LogSearch({
    read: (page) => this.read(page),
    refresh: () => this.update(() => undefined),
    reveal: (n, asked) => this.reveal(n, asked),
  });
  private lines: LogLine[] = [];
  /** The number of the line after the window. */
  private nextN = 1;
  /** The window ends at the log's end: live lines join it. */
  private atTail = false;
  private follow = true;
  private pending: LogLine[] = [];
  /** A tail read is under way: live lines wait for it instead of being dropped. */
  private tailReading = true;
  /** Lines a flood's markers skipped since the last numbered line (numbers on un-numbered lines). */
  private skippedLive = 0;
  /** Until then, live lines without numbers are matched with the last tail read by their text. */
  private matchUntil = 0;
  /** The line linked to (`#L120`), marked. */
  private target: number | undefined;
  /** The line a failed attempt's cause names (StepRun.cause), marked as the failure's. */
  private cause: number | undefined;
  private frame = 0;
  private tailTimer: ReturnType<typeof setTimeout> | undefined;
  private loading = false;
  /** Counts resets: an answer for an earlier log is dropped. */
  private generation = 0;
  private emptyText = 'No output yet.';

  constructor(private readonly options: LogViewOptions) {
    this.output = h('div', { class: 'log log-output', role: 'log', 'aria-label': 'Log', tabindex: '0', 'data-test': 'log' }, this.earlierRow, this.body, this.laterRow);
    this.element = h('div', { class: 'log-view' }, this.problem, this.output);
    this.searchControls = this.finder.controls;
    this.output.addEventListener('scroll', () => this.onScroll());
    // The number is drawn before the line (CSS, from data-n): a click on it, left of the text, links to the line.
    this.body.addEventListener('click', (event) => {
      const row = (event.target as HTMLElement).closest<HTMLElement>('.log-line[data-n]');
      if (!row || event.clientX - row.getBoundingClientRect().left > parseFloat(getComputedStyle(row, '::before').width)) return;
      this.body.querySelector('.log-target')?.classList.remove('log-target');
      row.classList.add('log-target');
      this.target = Number(row.dataset.n);
      this.options.onLineLink?.(this.target);
    });
    this.render();
  }

  /** Empties the view for another log (its tail comes with `showTail`); the search runs again on it. */
  reset(emptyText: string): void {
    this.generation += 1;
    this.cancelFrame();
    Object.assign(this, { lines: [], nextN: 1, atTail: false, follow: true, pending: [], tailReading: true, target: undefined, loading: false, emptyText });
    this.options.onFollowChange?.(true);
    this.problem.hidden = true;
    this.finder.reset();
    this.render();
  }

  /**
   * A read of the log's last lines (no page): instead of the window while following; else joined
   * to it where they touch (a reader who scrolled up keeps their lines, away from the tail).
   */
  showTail(lines: readonly LogLine[]): void {
    this.problem.hidden = true;
    let joined = true;
    this.update(() => (joined = this.place(lines, this.follow || this.lines.length === 0 ? 'replace' : 'join')));
    Object.assign(this, { atTail: joined, tailReading: false, skippedLive: 0, matchUntil: Date.now() + 3000 });
    this.renderRows();
    if (this.pending.length > 0) this.flush();
    if (this.follow) this.scrollToEnd();
    this.onScroll(); // a reader who came back to the end follows again
    this.finder.resume();
  }

  /** Queues live lines; they reach the DOM at the next animation frame if the reader follows the tail. */
  append(lines: LogLine[]): void {
    if (lines.length === 0) return;
    this.pending = this.pending.concat(lines);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  setWrap(wrap: boolean): void {
    this.output.classList.toggle('wrap', wrap);
  }

  /** Shows each line's time (of its block, for lines read from disk) beside its number. */
  setTimes(times: boolean): void {
    this.output.classList.toggle('times', times);
  }

  /** Marks line `n` (a link to it) and shows it in the middle of the view; following stops. */
  goToLine(n: number): Promise<void> {
    this.target = n;
    return this.reveal(n, this.finder.searches);
  }

  /** Marks line `n` as the failure's cause (undefined: none), wherever the window shows it. */
  setCause(n: number | undefined): void {
    if (n === this.cause) return;
    this.body.querySelector('.log-cause')?.classList.remove('log-cause');
    this.cause = n;
    if (n !== undefined) this.body.querySelector(`.log-line[data-n="${n}"]`)?.classList.add('log-cause');
  }

  /** Follows the tail (reading it again when the window is elsewhere), or stops. */
  setFollow(follow: boolean, announce = false): void {
    this.follow = follow;
    if (announce) this.options.onFollowChange?.(follow);
    if (!follow) return;
    if (this.atTail) this.scrollToEnd();
    else this.readTail();
  }

  private readTail(): void {
    this.tailReading = true;
    this.options.readTail();
  }

  setEmptyText(text: string): void {
    this.emptyText = text;
    if (this.lines.length === 0) this.render();
  }

  /** Shows why a read failed (in the view, above the lines). */
  showProblem(message: string): void {
    this.tailReading = false;
    this.problem.hidden = false;
    this.problem.textContent = message;
  }

  dispose(): void {
    this.cancelFrame();
    this.finder.dispose();
    clearTimeout(this.tailTimer);
    this.generation += 1;
  }

  private cancelFrame(): void {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  /** A page of this log, or undefined when it failed (said in the view) or another log is shown now. */
  private async read(page: LogPage): Promise<LogLine[] | undefined> {
    const generation = this.generation;
    try {
      const lines = await this.options.read(page);
      if (generation !== this.generation) return undefined;
      this.problem.hidden = true;
      return lines;
    } catch (error) {
      if (generation === this.generation) this.showProblem(`Could not read the log: ${errorText(error)}`);
      return undefined;
    }
  }

  /**
   * Puts numbered lines into the window (a page's marker line is dropped: the window's first number
   * says the same): joined to it where they touch, else (unless `how` is 'join') in its place.
   * The window is then cut to `maxLines` on the side away from the new lines. False: not placed.
   */
  private place(page: readonly LogLine[], how: 'join' | 'replace' | 'either' = 'either'): boolean {
    const lines = page.filter((line) => line.n !== undefined);
    if (lines.length === 0) return true;
    const first = this.lines[0]?.n;
    if (how !== 'replace' && first !== undefined && lines[0]!.n! <= this.nextN && lines.at(-1)!.n! >= first - 1) {
      const earlier = lines.filter((line) => line.n! < first);
      this.lines = [...earlier, ...this.lines, ...lines.filter((line) => line.n! >= this.nextN)];
      if (this.lines.length > maxLines && earlier.length > 0) {
        this.lines.length = maxLines;
        this.atTail = false;
      }
    } else if (how === 'join') return false;
    else {
      this.lines = lines;
      this.atTail = false;
    }
    this.lines = this.lines.slice(-maxLines);
    while (this.lines.length > 0 && this.lines[0]!.n === undefined) this.lines.shift();
    this.nextN = (this.lines.findLast((line) => line.n !== undefined)?.n ?? 0) + 1;
    return true;
  }

  /** Runs `change` and renders, keeping the line at the top of the view where it was. */
  private update(change: () => void): void {
    const top = this.output.scrollTop;
    const rows = this.body.children;
    let anchor: LogLine | undefined;
    let offset = 0;
    for (let index = 0; index < this.lines.length && index < rows.length && !anchor; index++) {
      const row = rows[index] as HTMLElement;
      if (row.offsetTop + row.offsetHeight > top) [anchor, offset] = [this.lines[index], row.offsetTop - top];
    }
    change();
    this.render();
    const index = anchor ? this.lines.indexOf(anchor) : -1;
    if (index >= 0) this.output.scrollTop = (rows[index] as HTMLElement).offsetTop - offset;
  }

  private render(): void {
    const fragment = document.createDocumentFragment();
    for (const line of this.lines) fragment.appendChild(this.lineElement(line));
    if (this.lines.length === 0) fragment.appendChild(h('div', { class: 'log-empty' }, this.emptyText));
    this.body.replaceChildren(fragment);
    this.renderRows();
  }

  /** The marker rows: how many lines come before the window, and whether more come after it. */
  private renderRows(): void {
    const earlier = (this.lines[0]?.n ?? 1) - 1;
    this.earlierRow.hidden = earlier <= 0;
    this.earlierText.textContent = `… ${earlier.toLocaleString()} earlier ${earlier === 1 ? 'line' : 'lines'}${this.loading ? ', loading…' : ''}`;
    this.laterRow.hidden = this.atTail || this.lines.length === 0;
    this.output.style.setProperty('--digits', String(Math.max(3, String(this.nextN).length)));
  }

  /**
   * Live lines: those the window holds are dropped (by number, or for lines without one while the
   * last read is fresh, by text), the others numbered on from the window (past what a marker skipped).
   */
  private flush(): void {
    this.frame = 0;
    // A reader who scrolled up keeps the lines they read; the tail is read again when they come back.
    if (this.atTail && !this.follow) this.atTail = false;
    if (!this.atTail) {
      this.pending = this.tailReading ? this.pending.slice(-maxLines) : [];
      return this.renderRows();
    }
    let pending = this.pending;
    this.pending = [];
    if (Date.now() < this.matchUntil && pending.every((line) => line.n === undefined) && (pending = linesAfter(this.lines, pending)).length > 0) this.matchUntil = 0;
    const batch: LogLine[] = [];
    for (const line of pending) {
      if (line.skipped) {
        this.skippedLive += line.skipped;
        batch.push(line);
      } else if (line.n === undefined || line.n >= this.nextN) {
        const n = line.n ?? this.nextN + this.skippedLive;
        batch.push({ ...line, n });
        [this.nextN, this.skippedLive] = [n + 1, 0];
      }
    }
    if (batch.length === 0) return;
    // A marker leaves a gap: the tail is read again (at most once a second) to close it.
    if (batch.some((line) => line.skipped)) this.tailTimer ??= setTimeout(() => ((this.tailTimer = undefined), this.follow && this.atTail && this.readTail()), 1000);
    const all = this.lines.concat(batch);
    let cut = Math.max(0, all.length - maxLines);
    while (cut < all.length && all[cut]!.n === undefined) cut++;
    const held = this.lines.length;
    this.lines = all.slice(cut);
    if (cut >= held) this.render();
    else {
      for (let index = 0; index < cut; index++) this.body.firstChild!.remove();
      const fragment = document.createDocumentFragment();
      for (const line of batch) fragment.appendChild(this.lineElement(line));
      this.body.appendChild(fragment);
      this.renderRows();
    }
    this.scrollToEnd();
  }

  private async loadEarlier(): Promise<void> {
    const first = this.lines[0]?.n ?? 1;
    if (this.loading || first <= 1) return;
    this.loading = true;
    this.renderRows();
    const lines = await this.read({ before: first, limit: pageLines });
    this.loading = false;
    // A search may have moved the window meanwhile: the page is then dropped.
    if (lines && this.lines[0]?.n === first) this.update(() => this.place(lines));
    else this.renderRows();
  }

  /** The page after the window; one that ends before it was asked to is the end: the tail is read again. */
  private async loadLater(): Promise<void> {
    if (this.loading || this.atTail) return;
    this.loading = true;
    const before = this.nextN + pageLines;
    const lines = await this.read({ before, limit: pageLines });
    this.loading = false;
    if (!lines || this.nextN !== before - pageLines) return;
    this.update(() => this.place(lines));
    if ((lines.at(-1)?.n ?? 0) < before - 1) this.readTail();
  }

  /** Shows line `n` in the middle of the view, reading the lines around it when the window does not hold them. */
  private async reveal(n: number, asked: number): Promise<void> {
    if (this.follow) this.setFollow(false, true);
    if (!(n >= (this.lines[0]?.n ?? Infinity) && n < this.nextN)) {
      const context = await this.read({ before: n + contextLines / 2, limit: contextLines });
      if (!context || asked !== this.finder.searches) return;
      this.place(context);
    }
    this.render();
    const row = this.body.children[this.lines.findIndex((line) => line.n === n)] as HTMLElement | undefined;
    if (row) this.output.scrollTop = row.offsetTop - (this.output.clientHeight - row.offsetHeight) / 2;
  }

  private lineElement(line: LogLine): HTMLElement {
    const element = document.createElement('div');
    const marked = line.n === undefined ? '' : line.n === this.finder.hitLine ? ' log-hit' : line.n === this.target ? ' log-target' : '';
    element.className = `log-line${line.stream === 'err' ? ' err' : line.stream === 'info' ? ' info' : ''}${marked}${line.n !== undefined && line.n === this.cause ? ' log-cause' : ''}`;
    if (line.n !== undefined) element.dataset.n = String(line.n);
    if (line.ts) element.dataset.time = new Date(line.ts).toTimeString().slice(0, 8);
    this.finder.markMatches(element, line.line);
    return element;
  }

  private scrollToEnd(): void {
    this.output.scrollTop = this.output.scrollHeight;
  }

  private onScroll(): void {
    const { scrollTop, scrollHeight, clientHeight } = this.output;
    const atEnd = scrollHeight - scrollTop - clientHeight <= bottomSlack;
    if (scrollTop < topSlack) void this.loadEarlier();
    if (atEnd && !this.atTail) void this.loadLater();
    // Leaving the end stops following; coming back to the tail follows again. A scroll while the
    // window is not at the tail yet (its tail being read after a reset) leaves following alone.
    if (this.follow && !atEnd) this.setFollow(false, true);
    else if (!this.follow && atEnd && this.atTail) this.setFollow(true, true);
  }
}
