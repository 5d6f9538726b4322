// The command menu (Ctrl-K, ⌘-K on a Mac): type to find a screen to go to, a pipeline to run (its
// Run panel opens, as the Pipelines row's Run button does) or a run to open (by its id, title or
// issue key). ↑/↓ choose, Enter does it, Escape closes and focus goes back where it was. A modal
// <dialog> with a combobox and a listbox (the ARIA pattern), every text put in as text.

import type { Snapshot } from '../../src/core/api';
import type { AppContext } from '../app';
import { h, replace } from '../dom';
import { requestRunPanel } from './pipelines';
import { runTitle } from './runs';
import { matchesQuery } from './search-box';

interface Command {
  label: string;
  /** Shown after the label, dimmed: where it goes, a run's status. */
  detail?: string;
  /** The words it is found by, besides its label. */
  keywords?: string;
  run(): void;
}

/** The screens "Go to" offers, in the sidebar's order. */
export const screens: [path: string, name: string][] = [
  ['#/runs', 'Runs'], ['#/pipelines', 'Pipelines'], ['#/triggers', 'Triggers'], ['#/inbox', 'Inbox'],
  ['#/projects', 'Projects'], ['#/harnesses', 'Harnesses'], ['#/channels', 'Channels'], ['#/settings', 'Settings'],
];
/** The most rows the menu lists. */
const maxRows = 12;

/** The commands for `query`: screens and pipelines by their words; runs once something is typed (or by an exact id). */
function findCommands(context: AppContext, snapshot: Snapshot | undefined, query: string): Command[] {
  const commands: Command[] = screens.map(([path, name]) => ({ label: `Go to ${name}`, keywords: path, run: () => context.navigate(path) }));
  for (const pipeline of snapshot?.pipelines ?? []) {
    commands.push({ label: `Run ${pipeline.name}…`, detail: 'opens its Run panel', keywords: `start pipeline ${pipeline.id}`, run: () => {
      requestRunPanel(pipeline.id);
      context.navigate(`#/pipelines/${encodeURIComponent(pipeline.id)}`);
    } });
  }
  const found = commands.filter((command) => matchesQuery(`${command.label} ${command.keywords ?? ''}`, query));
  const trimmed = query.trim();
  if (trimmed) {
    const open = (id: string) => () => context.navigate(`#/runs/${encodeURIComponent(id)}`);
    const runs = (snapshot?.runs ?? []).filter((run) => run.id === trimmed || matchesQuery(`open run ${run.id} ${runTitle(run)} ${run.issue?.key ?? ''} ${run.pipelineName}`, trimmed));
    found.push(...runs.slice(0, maxRows).map((run) => ({ label: `Open run: ${runTitle(run)}`, detail: `${run.status} · ${run.id}`, run: open(run.id) })));
    // An id the snapshot does not hold (an older run): the run page reads it.
    if (/^run_[A-Za-z0-9]+$/.test(trimmed) && !runs.some((run) => run.id === trimmed)) found.push({ label: `Open run ${trimmed}`, run: open(trimmed) });
  }
  return found.slice(0, maxRows);
}

let openMenu: HTMLDialogElement | undefined;

/** Opens the command menu (once: a second Ctrl-K while it is open leaves it be). */
export function openCommandMenu(context: AppContext): void {
  if (openMenu?.open) return;
  const returnTo = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const input = h('input', {
    type: 'text', class: 'command-input', role: 'combobox', 'aria-expanded': 'true', 'aria-controls': 'command-list', 'aria-autocomplete': 'list',
    'aria-label': 'Command', placeholder: 'Screen, pipeline or run…', autocomplete: 'off', spellcheck: 'false', 'data-test': 'command-input',
  });
  const list = h('ul', { class: 'command-list', id: 'command-list', role: 'listbox', 'aria-label': 'Commands' });
  const dialog = h('dialog', { class: 'dialog command-menu', 'aria-label': 'Command menu', 'data-test': 'command-menu' },
    input, list, h('p', { class: 'meta command-hint' }, '↑ ↓ to choose · Enter to go · Esc to close'));
  let commands: Command[] = [];
  let active = 0;

  const render = () => {
    commands = findCommands(context, context.state.snapshot, input.value);
    active = Math.min(active, Math.max(0, commands.length - 1));
    replace(list, commands.length ? commands.map((command, index) => h('li', {
      id: `command-${index}`, role: 'option', class: 'command-item', 'aria-selected': String(index === active), 'data-index': index,
    }, h('span', { class: 'command-label' }, command.label), command.detail ? h('span', { class: 'meta command-detail' }, command.detail) : null))
      : h('li', { class: 'meta command-none', role: 'presentation' }, 'Nothing matches.'));
    if (commands.length) input.setAttribute('aria-activedescendant', `command-${active}`);
    else input.removeAttribute('aria-activedescendant');
    list.querySelector<HTMLElement>('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  };
  const close = (focusBack: boolean) => {
    if (!dialog.open) return;
    dialog.close();
    dialog.remove();
    openMenu = undefined;
    if (focusBack) returnTo?.focus();
  };
  const choose = (index: number) => {
    const command = commands[index];
    if (!command) return;
    close(false);
    command.run();
  };

  input.addEventListener('input', () => {
    active = 0;
    render();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (commands.length) active = (active + (event.key === 'ArrowDown' ? 1 : commands.length - 1)) % commands.length;
      render();
    } else if (event.key === 'Enter') {
      event.preventDefault();
      choose(active);
    }
  });
  list.addEventListener('click', (event) => {
    const item = (event.target as HTMLElement).closest<HTMLElement>('[data-index]');
    if (item) choose(Number(item.dataset.index));
  });
  dialog.addEventListener('cancel', (event) => {
    event.preventDefault();
    close(true);
  });
  // A click on the backdrop (outside the box) closes it.
  dialog.addEventListener('click', (event) => {
    const box = dialog.getBoundingClientRect();
    const outside = event.clientX < box.left || event.clientX > box.right || event.clientY < box.top || event.clientY > box.bottom;
    if (event.target === dialog && outside) close(true);
  });
  document.body.appendChild(dialog);
  openMenu = dialog;
  render();
  dialog.showModal();
  input.focus();
}
