// Getting started: after the demo, what leads on. A checklist on the Runs screen whose items tick
// themselves from the snapshot (no state of its own in the engine): run the demo, add your
// repository, connect a tracker, turn on webhooks, pair your phone. Dismissed for good with its
// button (localStorage: this device only); gone by itself once everything is done.

import type { AppContext } from '../app';
import { h, replace } from '../dom';
import { checklistItems } from './checklist-items';

const dismissedKey = 'factory.gettingStarted.dismissed';

/** The checklist panel; `update()` ticks what is done since. Hidden when dismissed or all done. */
export function gettingStarted(context: AppContext): { element: HTMLElement; update(): void } {
  const list = h('ol', {});
  const count = h('span', { class: 'meta', 'data-test': 'checklist-count' });
  const dismiss = h('button', { type: 'button', class: 'small', 'data-test': 'checklist-dismiss' }, 'Dismiss');
  const element = h('section', { class: 'getting-started', 'aria-labelledby': 'getting-started-title', 'data-test': 'checklist' },
    h('div', { class: 'getting-started-head' }, h('h2', { id: 'getting-started-title' }, 'Getting started'), count, h('span', { class: 'spacer' }), dismiss),
    list);
  dismiss.addEventListener('click', () => {
    try {
      localStorage.setItem(dismissedKey, '1');
    } catch {
      // Storage refused: hidden for this visit only.
    }
    element.hidden = true;
  });

  function update(): void {
    const snapshot = context.state.snapshot;
    let dismissed = false;
    try {
      dismissed = localStorage.getItem(dismissedKey) === '1';
    } catch {
      dismissed = false;
    }
    const items = snapshot ? checklistItems(snapshot, !context.desktop) : [];
    const done = items.filter((item) => item.done).length;
    element.hidden = dismissed || items.length === 0 || done === items.length;
    if (element.hidden) return;
    count.textContent = `${done} of ${items.length} done`;
    replace(list, items.map((item) => h('li', { class: item.done ? 'done' : '', 'data-item': item.id },
      h('span', { class: 'tick', 'aria-hidden': 'true' }, item.done ? '✓' : ''),
      h('span', {},
        h('a', { href: item.href, class: 'step-title' }, item.title),
        h('span', { class: 'visually-hidden' }, item.done ? ' (done)' : ' (to do)'),
        ' ', h('span', { class: 'step-hint' }, item.hint)))));
  }
  update();
  return { element, update };
}
