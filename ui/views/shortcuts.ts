// Keyboard shortcuts and focus, for the whole app (main.ts installs them once):
//   j / k          the next / previous item of the page's list (Runs, Pipelines, Triggers, Inbox);
//                  focus goes to the item's link or button, so Enter opens it
//   Ctrl-K, ⌘-K    the command menu (command-menu.ts)
//   (`/` to the page's search is main.ts's)
// and where focus goes when a screen opens: to its heading, when what had focus went away with
// the screen before (a run opened from the list), so a keyboard and a screen reader start there;
// and the skip link, the first thing Tab reaches.

import type { AppContext } from '../app';
import { h } from '../dom';
import { openCommandMenu } from './command-menu';

/** What j/k move between: each list item's link or button that opens it, in page order. */
const listTargets = [
  'a.run-row',
  '[data-test="pipeline-row"] .row-title',
  '.trigger-list .item-button',
  '.inbox-item .inbox-title',
].join(', ');

/** Typing in these is text, not a shortcut. */
const typingTarget = 'input, textarea, select, [contenteditable]:not([contenteditable="false"])';

/** The item after (`step` 1) or before (-1) the focused one among the visible items; the first (or last) when none is focused. */
function moveInList(main: HTMLElement, step: 1 | -1): HTMLElement | undefined {
  const items = [...main.querySelectorAll<HTMLElement>(listTargets)].filter((item) => item.getClientRects().length > 0);
  if (items.length === 0) return undefined;
  const current = items.findIndex((item) => item === document.activeElement || item.contains(document.activeElement));
  const next = current < 0 ? (step === 1 ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, current + step));
  const target = items[next]!;
  target.focus({ preventScroll: true });
  target.scrollIntoView({ block: 'nearest' });
  return target;
}

export function installShortcuts(context: AppContext, main: HTMLElement): void {
  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.isComposing) return;
    if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === 'k') {
      event.preventDefault();
      openCommandMenu(context);
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || (event.key !== 'j' && event.key !== 'k')) return;
    const target = event.target as HTMLElement;
    if (target.closest?.(typingTarget) || document.querySelector('dialog[open]')) return;
    if (moveInList(main, event.key === 'j' ? 1 : -1)) event.preventDefault();
  });
}

/** The link that skips the sidebar to the main column: the first thing Tab reaches; shown when focused. */
export function skipLink(main: HTMLElement): HTMLElement {
  return h('a', { class: 'skip-link', href: '#main', 'data-test': 'skip-link', onclick: (event: Event) => {
    // The address is the app's route: the link moves focus without changing it.
    event.preventDefault();
    focusHeading(main) || main.focus();
  } }, 'Skip to content');
}

/** Focuses the page's heading (made focusable by script only); false when it has none. */
export function focusHeading(main: HTMLElement): boolean {
  const heading = main.querySelector<HTMLElement>('h1');
  if (!heading) return false;
  heading.tabIndex = -1;
  heading.focus({ preventScroll: false });
  return true;
}

/**
 * After a screen replaced the main column: focus its heading when the focus was lost with the
 * old screen (it is on the body now) or was in the main column. Focus in the sidebar or the top
 * bar stays, so moving through the sidebar with the keyboard is not interrupted.
 */
export function focusAfterNavigation(main: HTMLElement): void {
  const active = document.activeElement;
  if (active && active !== document.body && !main.contains(active)) return;
  focusHeading(main);
}
