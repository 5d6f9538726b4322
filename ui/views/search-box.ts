// The search field of a list page (Pipelines, Triggers, Inbox), like Runs': a fixed width, it
// filters as you type, Escape empties it, and `/` jumps to it (main.ts). It filters the items the
// view rendered by their text, and again whenever the list changes (a live update), so a view
// only places it; the view's own rendering is left as it is.

import { h } from '../dom';

interface ListSearchOptions {
  /** The element holding the list: watched for changes. */
  scope: HTMLElement;
  /** The items inside `scope` that a query shows or hides. */
  items: string;
  /** Groups of items (with a heading) hidden when none of their items is shown. */
  groups?: string;
  /** What the list holds, for the label and the empty line: "pipelines". */
  noun: string;
  placeholder: string;
}

/** Whether `text` holds every word of `query` (any letter case): "demo ship" finds "Ship the demo". */
export function matchesQuery(text: string, query: string): boolean {
  const lower = text.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((word) => lower.includes(word));
}

/** The search field; the list it filters is `options.scope`. */
export function listSearch(options: ListSearchOptions): HTMLInputElement {
  const input = h('input', {
    type: 'search', class: 'list-search', placeholder: options.placeholder, 'aria-label': `Search ${options.noun}`,
    title: `Search ${options.noun} (press / to jump here)`, 'data-test': 'list-search', autocomplete: 'off',
  });
  const none = h('p', { class: 'empty list-no-match', 'data-test': 'list-no-match', hidden: true });

  const apply = () => {
    const query = input.value.trim();
    let shown = 0;
    const items = [...options.scope.querySelectorAll<HTMLElement>(options.items)];
    for (const item of items) {
      item.hidden = query !== '' && !matchesQuery(item.textContent ?? '', query);
      if (!item.hidden) shown++;
    }
    if (options.groups) {
      for (const group of options.scope.querySelectorAll<HTMLElement>(options.groups)) {
        group.hidden = query !== '' && ![...group.querySelectorAll<HTMLElement>(options.items)].some((item) => !item.hidden);
      }
    }
    none.hidden = query === '' || shown > 0 || items.length === 0;
    none.textContent = `No ${options.noun} match “${query}”.`;
    if (!none.isConnected) options.scope.after(none);
  };

  input.addEventListener('input', apply);
  input.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !input.value) return;
    event.stopPropagation();
    input.value = '';
    apply();
  });
  // The view re-renders its list on every change of the state: the query holds across.
  new MutationObserver(() => input.value.trim() && apply()).observe(options.scope, { childList: true, subtree: true });
  return input;
}
