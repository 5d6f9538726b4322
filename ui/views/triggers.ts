// The Triggers screen: the list of triggers (name, kind, pipeline, last poll or event, errors,
// drafts kept), New trigger, and which trigger's editor (trigger-editor.ts) is open beside it.
// `update()` re-renders the list and the editor's live parts but never the form the user is
// typing in; an editor left with unsaved changes is kept as a draft (drafts.ts).

import type { TriggerConfig, TriggerKind } from '../../src/core/api';
import type { ScreenFactory } from '../app';
import { h, replace, timeElement } from '../dom';
import { errorWords } from './error-details';
import { DraftShelf } from './drafts';
import { isPendingDeletion } from './pending-deletions';
import { listSearch } from './search-box';
import { kindList, kindNames, providerForms } from './trigger-kinds';
import { TriggerEditor } from './trigger-editor';

export const triggersScreen: ScreenFactory = (context) => {
  /** The trigger in the editor: an id, 'new', or undefined (nothing open). */
  let selected: string | undefined;
  let editor: TriggerEditor | undefined;
  /** Editors left with unsaved changes, per trigger ('new': the one being made), shown again when opened (drafts.ts). */
  const shelf = new DraftShelf<TriggerEditor>();

  const newButton = h('button', { type: 'button', class: 'primary' }, 'New trigger');
  const list = h('ul', { class: 'list trigger-list', 'aria-label': 'Triggers' });
  const listArea = h('div', { class: 'split-list' });
  const editorArea = h('div', { class: 'split-detail' });
  const element = h('section', { class: 'page triggers-page' },
    h('div', { class: 'toolbar' }, h('h1', { class: 'toolbar-title' }, 'Triggers'),
      listSearch({ scope: list, items: 'li', noun: 'triggers', placeholder: 'Search name, kind, pipeline' }), h('span', { class: 'spacer' }), newButton),
    h('p', { class: 'muted intro' }, `A trigger starts a pipeline when an issue arrives: a generic webhook posts one to its URL; a ${kindList(Object.keys(providerForms), 'disjunction')} trigger polls the tracker’s issues and takes its webhooks.`),
    h('div', { class: 'split' }, listArea, editorArea));

  newButton.addEventListener('click', () => open('new', 'webhook', '', true));
  // One listener for the whole list (event delegation).
  list.addEventListener('click', (event) => {
    const item = (event.target as HTMLElement).closest<HTMLElement>('[data-id]');
    if (item) open(item.dataset.id!, 'webhook', '', true);
  });

  function triggers(): TriggerConfig[] {
    return (context.state.snapshot?.triggers ?? []).filter((trigger) => !isPendingDeletion(trigger.id));
  }

  /**
   * Opens a trigger, a new one ('new', of `kind`, with the name typed so far), or nothing. `keep`
   * (the person switched): the editor left keeps its draft, and a draft kept for `id` comes back.
   */
  function open(id: string | undefined, kind: TriggerKind = 'webhook', name = '', keep = false): void {
    selected = id;
    const trigger = triggers().find((candidate) => candidate.id === id);
    const shown = shelf.open(id, keep, () => new TriggerEditor(context, trigger, { kind, name }, {
      saved: (saved) => open(saved?.id),
      changeKind: (next, typed) => open('new', next, typed),
    }), () => open(id));
    editor = shown?.editor;
    if (shown?.kept) shown.editor.update();
    if (editor) replace(editorArea, editor.element);
    else replace(editorArea, triggers().length ? h('div', { class: 'empty' }, 'Choose a trigger to see its URL and its recent events.') : null);
    renderList();
    editor?.focus();
  }

  function renderList(): void {
    const snapshot = context.state.snapshot;
    const all = triggers();
    if (all.length === 0) {
      const hasPipelines = (snapshot?.pipelines.length ?? 0) > 0;
      const start = h('button', { type: 'button', class: 'primary' }, 'New trigger');
      start.addEventListener('click', () => open('new'));
      replace(listArea, h('div', { class: 'empty' },
        h('p', {}, 'No triggers yet. A trigger starts a pipeline when a service posts to its URL or a tracker has a matching issue.'),
        hasPipelines ? start : h('p', {}, 'Create a pipeline first: ', h('a', { href: '#/pipelines' }, 'Pipelines'))));
      return;
    }
    replace(list, all.map((trigger) => {
      const state = snapshot?.triggerStates[trigger.id];
      const pipeline = snapshot?.pipelines.find((candidate) => candidate.id === trigger.pipelineId);
      const polls = trigger.kind !== 'webhook';
      return h('li', { class: 'list-item' },
        h('button', { type: 'button', class: 'item-button', 'data-id': trigger.id, ...(trigger.id === selected ? { 'aria-current': 'true' } : {}) },
          h('span', { class: 'item-title' }, trigger.name,
            trigger.enabled ? null : h('span', { class: 'tag' }, 'off'),
            shelf.has(trigger.id) ? h('span', { class: 'tag tag-draft' }, 'unsaved') : null),
          h('span', { class: 'meta item-meta' },
            `${kindNames[trigger.kind] ?? trigger.kind} → ${pipeline?.name ?? 'missing pipeline'} · `,
            polls ? 'last poll ' : 'last event ', timeElement(polls ? state?.lastPollAt : state?.lastEventAt),
            ` · ${state?.processedCount ?? 0} processed`),
          state?.lastError ? h('span', { class: 'meta item-error' }, `✕ ${errorWords(state.lastError)}`) : null));
    }));
    if (list.parentNode !== listArea) replace(listArea, list);
  }

  if (triggers().length > 0) open(triggers()[0]!.id);
  else open(undefined);

  return {
    element,
    update() {
      // A trigger gone opens the first; the first trigger to appear (another device made it) opens too.
      if (selected === undefined ? triggers().length > 0 : selected !== 'new' && !triggers().some((trigger) => trigger.id === selected)) open(triggers()[0]?.id);
      renderList();
      editor?.update();
    },
  };
};
