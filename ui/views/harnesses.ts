// The Harnesses screen: every coding-agent CLI Factory can run (built-in and custom), whether it
// is installed, its models, and the form that defines a custom harness or changes a built-in one.
//
// View: the toolbar, the editor (shown while editing) and the list. The list is one element with
// one click and one change listener (event delegation); `update()` re-renders it from the
// snapshot and leaves the editor alone.

import type { HarnessDefinition, HarnessStatus } from '../../src/core/api';
import { errorText, type AppContext, type ScreenFactory } from '../app';
import { h, replace } from '../dom';
import { confirmAction } from './dialog';
import { mayDiscard, watchForm, type Draft } from './drafts';
import { FormFields, lines, option, switchControl, withBusy } from './settings-form';

const outputFormats = ['text', 'claude-stream-json', 'codex-json', 'gemini-stream-json', 'opencode-json', 'cursor-stream-json', 'amp-stream-json'];

export const harnessesScreen: ScreenFactory = (context) => {
  const detect = h('button', { type: 'button' }, 'Detect again');
  const create = h('button', { type: 'button', class: 'primary' }, 'New custom harness');
  const editorArea = h('div', { class: 'harness-editor-area' });
  const list = h('ul', { class: 'list harness-list', 'aria-label': 'Harnesses' });
  const element = h('section', { class: 'page harnesses-page' },
    h('div', { class: 'toolbar' }, h('h1', { class: 'toolbar-title' }, 'Harnesses'), h('span', { class: 'spacer' }), detect, create),
    h('p', { class: 'muted intro' }, 'A harness is a coding-agent command line that agent steps run. Factory looks for each one on this machine.'),
    editorArea,
    list);

  let editing: string | undefined;
  // The open editor is a draft (drafts.ts): opening another one asks before it goes.
  let draft: Draft | undefined;

  function harnesses(): HarnessDefinition[] {
    return context.state.snapshot?.harnesses ?? [];
  }

  /** Opens the editor of `harness` (a new one with `isNew`), or closes it; `ask`: a draft in the open editor asks first. */
  async function edit(harness: HarnessDefinition | undefined, isNew = false, ask = false): Promise<void> {
    if (ask && !await mayDiscard(draft, 'Discard your changes to this harness?')) return;
    draft?.forget();
    draft = undefined;
    editing = isNew ? 'new' : harness?.id;
    if (!isNew && !harness) {
      replace(editorArea);
      return;
    }
    const editor = harnessEditor(context, harness, () => void edit(undefined));
    replace(editorArea, editor.element);
    draft = watchForm(editor.element);
    editor.focus();
  }

  detect.addEventListener('click', async () => {
    try {
      const statuses = await withBusy(detect, 'Detecting…', () => context.api.detectHarnesses());
      if (context.state.snapshot) context.state.snapshot.harnessStatus = statuses;
      render();
      const found = Object.values(statuses).filter((status) => status.installed).length;
      context.toast(`${found} of ${Object.keys(statuses).length} harnesses found`);
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  });
  create.addEventListener('click', () => void edit(undefined, true, true));

  list.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    if (!button) return;
    const harness = harnesses().find((candidate) => candidate.id === button.dataset.id);
    if (!harness) return;
    if (button.dataset.action === 'edit') void edit(harness, false, true);
    else if (button.dataset.action === 'models') void refreshModels(button, harness);
    else if (button.dataset.action === 'delete') void remove(button, harness);
  });
  list.addEventListener('change', async (event) => {
    const input = event.target as HTMLInputElement;
    if (input.dataset.action !== 'enabled') return;
    const id = input.dataset.id!;
    const enabled = input.checked;
    input.disabled = true;
    try {
      await context.api.setHarnessEnabled(id, enabled);
      const harness = harnesses().find((candidate) => candidate.id === id);
      if (harness) harness.enabled = enabled;
      context.toast(`${harness?.name ?? id} ${enabled ? 'enabled' : 'disabled'}`);
    } catch (error) {
      input.checked = !enabled;
      context.toast(errorText(error), 'error');
    } finally {
      input.disabled = false;
    }
  });

  async function refreshModels(button: HTMLButtonElement, harness: HarnessDefinition): Promise<void> {
    try {
      const updated = await withBusy(button, 'Refreshing…', () => context.api.refreshModels(harness.id));
      const snapshot = context.state.snapshot;
      if (snapshot) snapshot.harnesses = snapshot.harnesses.map((candidate) => (candidate.id === updated.id ? updated : candidate));
      render();
      context.toast(`${updated.name}: ${updated.models.length} model${updated.models.length === 1 ? '' : 's'}`);
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  }

  async function remove(button: HTMLButtonElement, harness: HarnessDefinition): Promise<void> {
    const confirmed = await confirmAction(harness.builtIn
      ? { title: `Reset ${harness.name} to its defaults?`, body: 'Your changes to its command, arguments and models are lost.', confirm: 'Reset', danger: true }
      : { title: `Delete the harness ${harness.name}?`, confirm: 'Delete', danger: true });
    if (!confirmed) return;
    try {
      await withBusy(button, harness.builtIn ? 'Resetting…' : 'Deleting…', () => context.api.deleteHarness(harness.id));
      if (editing === harness.id) void edit(undefined);
      context.toast(harness.builtIn ? `${harness.name} reset to its defaults` : `${harness.name} deleted`);
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  }

  function render(): void {
    const snapshot = context.state.snapshot;
    const all = harnesses();
    if (all.length === 0) {
      replace(list, h('li', { class: 'empty' }, 'No harnesses. Add a custom harness for the agent CLI you use.'));
      return;
    }
    replace(list, all.map((harness) => harnessItem(harness, snapshot?.harnessStatus[harness.id])));
  }

  render();
  return {
    element,
    update: render,
  };
};

function harnessItem(harness: HarnessDefinition, status: HarnessStatus | undefined): HTMLLIElement {
  const enabled = switchControl('Enabled', harness.enabled, { 'data-action': 'enabled', 'data-id': harness.id, 'aria-label': `${harness.name} enabled` });
  let state: HTMLElement;
  if (!harness.enabled) state = h('span', { class: 'install muted' }, '– disabled: not detected');
  else if (!status) state = h('span', { class: 'install muted' }, '○ not checked yet');
  else if (status.installed) {
    state = h('span', { class: 'install install-ok' }, '✓ installed',
      h('span', { class: 'meta' }, [status.version, status.path].filter(Boolean).join(' · ') ? ` · ${[status.version, status.path].filter(Boolean).join(' · ')}` : ''));
  } else if (harness.install) {
    // A CLI that is not there is a choice to make, not a fault: neutral, with the command that installs it.
    state = h('span', { class: 'install muted', 'data-test': 'not-installed' }, '○ Not installed · install with ', h('code', { class: 'mono' }, harness.install));
  } else state = h('span', { class: 'install muted', 'data-test': 'not-installed' }, '○ Not installed: ', h('code', {}, harness.command), ' was not found on PATH');

  const models = harness.models.length
    ? h('ul', { class: 'chips', 'aria-label': `${harness.name} models` }, harness.models.map((model) => h('li', { class: 'chip mono' }, model)))
    : h('span', { class: 'meta' }, 'No models listed: the CLI picks its default.');

  return h('li', { class: 'harness' },
    h('div', { class: 'harness-head' },
      h('h2', { class: 'harness-name' }, harness.name, h('span', { class: 'tag' }, harness.builtIn ? 'built-in' : 'custom')),
      enabled.element),
    h('div', { class: 'harness-status' }, h('code', { class: 'mono' }, harness.command), ' ', state),
    h('div', { class: 'harness-models' }, h('span', { class: 'meta' }, 'Models: '), models),
    h('div', { class: 'harness-actions' },
      h('button', { type: 'button', 'data-action': 'models', 'data-id': harness.id, 'aria-label': `Refresh models of ${harness.name}` }, 'Refresh models'),
      h('button', { type: 'button', 'data-action': 'edit', 'data-id': harness.id, 'aria-label': `Edit ${harness.name}` }, 'Edit'),
      h('button', { type: 'button', class: 'danger', 'data-action': 'delete', 'data-id': harness.id, 'aria-label': `${harness.builtIn ? 'Reset' : 'Delete'} ${harness.name}` }, harness.builtIn ? 'Reset' : 'Delete')));
}

/** The form of one harness: a new custom one when `harness` is undefined. */
function harnessEditor(context: AppContext, harness: HarnessDefinition | undefined, close: () => void): { element: HTMLElement; focus(): void } {
  const fields = new FormFields();
  const name = h('input', { type: 'text', required: true, autocomplete: 'off' });
  const command = h('input', { type: 'text', required: true, class: 'mono', spellcheck: 'false', placeholder: 'my-agent' });
  const args = h('textarea', { rows: 5, spellcheck: 'false', placeholder: '--print\n--model\n{{model}}' });
  const promptVia = h('select', {}, option('stdin', 'Standard input (stdin)', harness?.promptVia ?? 'stdin'), option('arg', 'An argument: the {{prompt}} line of the args', harness?.promptVia));
  const output = h('select', {}, outputFormats.map((format) => option(format, format, harness?.output ?? 'text')));
  const versionArgs = h('input', { type: 'text', class: 'mono', spellcheck: 'false', placeholder: '--version' });
  const modelsArgs = h('textarea', { rows: 2, spellcheck: 'false', placeholder: 'models\n--list' });
  const resume = h('textarea', { rows: 2, spellcheck: 'false', placeholder: '--resume\n{{sessionId}}' });
  const models = h('textarea', { rows: 3, spellcheck: 'false', placeholder: 'one model per line' });

  name.value = harness?.name ?? '';
  command.value = harness?.command ?? '';
  args.value = (harness?.args ?? []).join('\n');
  versionArgs.value = (harness?.versionArgs ?? ['--version']).join(' ');
  modelsArgs.value = (harness?.modelsArgs ?? []).join('\n');
  resume.value = (harness?.resume ?? []).join('\n');
  models.value = (harness?.models ?? []).join('\n');

  function definition(): HarnessDefinition {
    return {
      id: harness?.id ?? '',
      name: name.value.trim(),
      builtIn: harness?.builtIn ?? false,
      enabled: harness?.enabled ?? true,
      command: command.value.trim(),
      args: lines(args.value),
      promptVia: promptVia.value as HarnessDefinition['promptVia'],
      versionArgs: versionArgs.value.split(/\s+/).filter(Boolean),
      modelsArgs: lines(modelsArgs.value),
      resume: lines(resume.value),
      models: lines(models.value),
      output: output.value,
      ...(harness?.env ? { env: harness.env } : {}),
    };
  }

  const save = h('button', { type: 'submit', class: 'primary' }, harness ? 'Save' : 'Create harness');
  const fetchModels = h('button', { type: 'button' }, 'List models now');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  cancel.addEventListener('click', close);
  fetchModels.addEventListener('click', async () => {
    fields.clear();
    try {
      const found = await withBusy(fetchModels, 'Listing…', () => context.api.listModels(definition()));
      models.value = found.join('\n');
      context.toast(`${found.length} model${found.length === 1 ? '' : 's'} found: save to keep them`);
    } catch (error) {
      if (!fields.showError(error)) context.toast(errorText(error), 'error');
    }
  });

  const title = harness ? `Edit ${harness.name}` : 'New custom harness';
  const form = h('form', { class: 'panel editor', novalidate: true, 'aria-label': title },
    h('h2', { class: 'editor-title' }, title),
    harness?.builtIn ? h('p', { class: 'meta' }, 'A built-in harness: your changes are kept apart from its defaults; Reset restores them.') : null,
    h('div', { class: 'form-grid' },
      fields.field('name', 'Name', name),
      fields.field('command', 'Command', command, 'A program on the PATH, or an absolute path.')),
    fields.field('args', 'Arguments, one per line', args, 'May use {{prompt}}, {{model}} and {{systemPrompt}}. A --flag line before {{model}} is dropped when no model is set.'),
    h('div', { class: 'form-grid' },
      fields.field('promptVia', 'Prompt goes in via', promptVia),
      fields.field('output', 'Output format', output, 'How Factory reads what the CLI prints.')),
    h('div', { class: 'form-grid' },
      fields.field('versionArgs', 'Version arguments', versionArgs, 'Used to check that the CLI is installed.'),
      fields.field('modelsArgs', 'Models arguments, one per line', modelsArgs, 'Optional: arguments that print the models, one per line.')),
    fields.field('resume', 'Resume arguments, one per line', resume, 'Optional: how a follow-up run continues the earlier agent session, placed before the prompt; {{sessionId}} is its id. Empty: it starts fresh with the earlier run\'s summary.'),
    fields.field('models', 'Models, one per line', models),
    fields.general,
    h('div', { class: 'form-actions' }, save, fetchModels, cancel));
  fields.register('env', form);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fields.clear();
    try {
      const saved = await withBusy(save, 'Saving…', () => context.api.saveHarness(definition()));
      const snapshot = context.state.snapshot;
      if (snapshot && !snapshot.harnesses.some((candidate) => candidate.id === saved.id)) snapshot.harnesses.push(saved);
      context.toast(`${saved.name} saved`);
      close();
    } catch (error) {
      fields.showError(error);
    }
  });
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') close();
  });
  return { element: form, focus: () => name.focus() };
}
