// Settings → Runners (issue 25, point 5): where runs execute. Lists the runners (the built-in one,
// this computer, is read-only), a form to add or edit one (sandbox: the network switch; ssh: host,
// port, user, identity file, host key check, work folder), Save, Delete (the engine refuses while a
// project, pipeline or trigger uses it, and says which), and Test: git and the agent CLIs found
// there, or why the runner cannot run steps, in words.

import type { Runner, RunnerTest } from '../../src/core/api';
import { errorText, type AppContext } from '../app';
import { CallError } from '../call-error';
import { h, replace } from '../dom';
import { confirmAction } from './dialog';
import { watchForm, type Draft } from './drafts';
import { FormFields, option, resultLine, switchControl, withBusy } from './settings-form';

const kindWords: Record<Runner['kind'], string> = {
  local: 'This computer, with your own rights',
  sandbox: 'Sandbox (bubblewrap, on this computer)',
  ssh: 'Another machine over SSH',
};

/** One line of what a runner is: `sandbox · no network · 2 runs at once`, `ssh · ada@build:2222 · /srv/work`. */
function runnerSummary(runner: Runner): string {
  const parts: string[] = [runner.kind];
  if (runner.kind === 'local') parts.push('built in: steps run as you, with your files');
  if (runner.kind === 'sandbox') parts.push(runner.network === false ? 'no network' : 'network on');
  if (runner.kind === 'ssh') {
    parts.push(`${runner.user ? `${runner.user}@` : ''}${runner.host ?? '?'}${runner.port ? `:${runner.port}` : ''}`);
    parts.push(runner.workDir ?? '~/.factory/work');
    if (runner.knownHosts === 'accept-new') parts.push('accepts a new host key');
  }
  if (runner.maxParallelRuns) parts.push(`${runner.maxParallelRuns} ${runner.maxParallelRuns === 1 ? 'run' : 'runs'} at once`);
  return parts.join(' · ');
}

/**
 * What Test found: git's version, then each agent CLI's version (`✓ Claude Code: 1.0.3`) or why it
 * cannot run there (`○ Codex is not installed in the sandbox: … install it there with …`).
 */
function testFindings(answer: RunnerTest, harnessName: (id: string) => string): HTMLElement {
  const agents = Object.entries(answer.details?.harnesses ?? {}).map(([id, words]) => {
    const missing = words.includes(' is not installed ');
    return h('li', { class: missing ? 'runner-missing' : '', 'data-test': 'runner-agent' }, missing ? `○ ${words}` : `✓ ${harnessName(id)}: ${words}`);
  });
  return h('div', {}, `✓ ${answer.details?.git ?? 'It can run steps'}`, agents.length ? h('ul', { class: 'runner-agents' }, agents) : null);
}

export function runnersPanel(context: AppContext): { element: HTMLElement; update(): void } {
  const list = h('ul', { class: 'list account-list', 'aria-label': 'Runners', 'data-test': 'runner-list' });
  const formArea = h('div');
  const add = h('button', { type: 'button', 'data-test': 'add-runner' }, 'Add runner');
  const runners = (): Runner[] => context.state.snapshot?.runners ?? [];
  let draft: Draft | undefined;

  function edit(runner: Runner | undefined): void {
    draft?.forget();
    const form = runnerForm(context, runner, () => {
      draft?.forget();
      draft = undefined;
      replace(formArea);
      add.hidden = false;
      render();
      add.focus();
    });
    add.hidden = true;
    replace(formArea, form);
    draft = watchForm(form);
    form.querySelector<HTMLElement>('input, select')?.focus();
  }
  add.addEventListener('click', () => edit(undefined));

  list.addEventListener('click', async (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    const row = button?.closest<HTMLElement>('[data-id]');
    const runner = runners().find((candidate) => candidate.id === row?.dataset.id);
    if (!button || !row || !runner) return;
    if (button.dataset.action === 'edit') return edit(runner);
    if (!await confirmAction({ title: `Delete the runner “${runner.name}”?`, body: 'Runs that ran on it keep their logs.', confirm: 'Delete', danger: true })) return;
    const problem = row.querySelector<HTMLElement>('[data-test="runner-problem"]')!;
    problem.hidden = true;
    try {
      await withBusy(button, 'Deleting…', () => context.api.deleteRunner(runner.id));
      const snapshot = context.state.snapshot;
      if (snapshot) snapshot.runners = snapshot.runners.filter((candidate) => candidate.id !== runner.id);
      context.toast(`Runner “${runner.name}” deleted`);
      render();
    } catch (error) {
      // Refused while a project, pipeline or trigger uses it: the engine's words, at the runner.
      problem.hidden = false;
      problem.textContent = errorText(error);
    }
  });

  function render(): void {
    replace(list, runners().map((runner) => h('li', { class: 'account', 'data-id': runner.id, 'data-test': 'runner-row' },
      h('div', { class: 'account-text' },
        h('span', { class: 'item-title' }, runner.name, h('span', { class: 'tag' }, runner.kind)),
        h('span', { class: 'meta' }, runnerSummary(runner)),
        h('span', { class: 'field-error', role: 'alert', hidden: true, 'data-test': 'runner-problem' })),
      runner.kind === 'local' ? null : h('div', { class: 'form-actions' },
        h('button', { type: 'button', 'data-action': 'edit' }, 'Edit'),
        h('button', { type: 'button', class: 'danger', 'data-action': 'delete' }, 'Delete')))));
  }
  render();

  return {
    element: h('section', { class: 'panel', 'aria-labelledby': 'settings-runners', 'data-test': 'runners-panel' },
      h('h2', { id: 'settings-runners' }, 'Runners'),
      h('p', { class: 'meta' }, 'Where runs execute. A sandbox keeps steps away from your home folder and the data folder; an SSH runner runs them on another machine. Projects, pipelines and triggers choose one.'),
      list, formArea, add),
    update: render,
  };
}

/** The form of one runner (a new sandbox runner when `runner` is undefined); `done` when saved or cancelled. */
function runnerForm(context: AppContext, runner: Runner | undefined, done: () => void): HTMLFormElement {
  const fields = new FormFields();
  const kind = h('select', {}, (['sandbox', 'ssh'] as const).map((value) => option(value, kindWords[value], runner?.kind ?? 'sandbox')));
  const name = h('input', { type: 'text', required: true, autocomplete: 'off', placeholder: 'Sandbox' });
  name.value = runner?.name ?? '';
  const network = switchControl('Network: agents reach their model (off: no network at all)', runner?.network !== false);
  const host = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', placeholder: 'build.example.com' });
  host.value = runner?.host ?? '';
  const port = h('input', { type: 'number', min: 1, max: 65535, step: 1, inputmode: 'numeric', class: 'narrow', placeholder: '22' });
  port.value = runner?.port === undefined ? '' : String(runner.port);
  const user = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'Your ssh config’s' });
  user.value = runner?.user ?? '';
  const identityFile = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', placeholder: '/home/ada/.ssh/id_ed25519' });
  identityFile.value = runner?.identityFile ?? '';
  const knownHosts = h('select', {},
    option('strict', 'Strict: the host’s key must be known already', runner?.knownHosts ?? 'strict'),
    option('accept-new', 'Accept a new host’s key once, refuse a changed one', runner?.knownHosts));
  const workDir = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', placeholder: '~/.factory/work' });
  workDir.value = runner?.workDir ?? '';
  const maxParallel = h('input', { type: 'number', min: 1, max: 64, step: 1, inputmode: 'numeric', class: 'narrow', placeholder: 'No cap' });
  maxParallel.value = runner?.maxParallelRuns === undefined ? '' : String(runner.maxParallelRuns);

  const sandboxPart = h('div', { 'data-test': 'runner-sandbox-fields' }, network.element);
  fields.register('network', network.input);
  const sshPart = h('div', { 'data-test': 'runner-ssh-fields' },
    h('div', { class: 'form-grid' },
      fields.field('host', 'Host', host, 'The machine’s name or address.'),
      fields.field('port', 'Port', port, 'Default 22, or your ssh config’s.'),
      fields.field('user', 'User', user, 'Default: your ssh config’s.'),
      fields.field('knownHosts', 'Host key check', knownHosts)),
    fields.field('identityFile', 'Identity file (optional)', identityFile, 'A private key on this computer, as an absolute path. Default: your ssh config and agent.'),
    fields.field('workDir', 'Work folder on the host (optional)', workDir, 'An absolute path where run workspaces go. Default ~/.factory/work.'));
  const showKind = () => {
    sandboxPart.hidden = kind.value !== 'sandbox';
    sshPart.hidden = kind.value !== 'ssh';
  };
  kind.addEventListener('change', showKind);
  showKind();

  function input(): Runner {
    const value: Runner = { id: runner?.id ?? '', name: name.value.trim(), kind: kind.value as Runner['kind'] };
    if (value.kind === 'sandbox') value.network = network.input.checked;
    if (value.kind === 'ssh') {
      value.host = host.value.trim();
      if (port.value.trim()) value.port = Number(port.value);
      if (user.value.trim()) value.user = user.value.trim();
      if (identityFile.value.trim()) value.identityFile = identityFile.value.trim();
      value.knownHosts = knownHosts.value as Runner['knownHosts'];
      if (workDir.value.trim()) value.workDir = workDir.value.trim();
    }
    if (maxParallel.value.trim()) value.maxParallelRuns = Number(maxParallel.value);
    return value;
  }

  const result = h('p', { class: 'test-result', role: 'status', hidden: true, 'data-test': 'runner-test-result' });
  const save = h('button', { type: 'submit', class: 'primary' }, runner ? 'Save' : 'Add runner');
  const test = h('button', { type: 'button' }, 'Test');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  cancel.addEventListener('click', done);
  test.addEventListener('click', async () => {
    fields.clear();
    result.hidden = true;
    try {
      const answer = await withBusy(test, 'Testing…', () => context.api.testRunner(input()));
      // A refused input goes to its fields; a runner that cannot run steps says why below the buttons.
      if (!answer.ok && answer.fields?.length && fields.showError(new CallError(answer.error ?? '', answer.fields))) return;
      const harnessName = (id: string) => context.state.snapshot?.harnesses.find((harness) => harness.id === id)?.name ?? id;
      resultLine(result, answer.ok, answer.ok ? '' : answer.error ?? 'The runner cannot run steps');
      if (answer.ok) replace(result, testFindings(answer, harnessName));
    } catch (error) {
      if (!fields.showError(error)) resultLine(result, false, errorText(error));
    }
  });

  const form = h('form', { class: 'editor account-form', novalidate: true, 'aria-label': runner ? `Runner ${runner.name}` : 'New runner', 'data-test': 'runner-form' },
    h('div', { class: 'form-grid' }, fields.field('kind', 'Kind', kind), fields.field('name', 'Name', name)),
    sandboxPart,
    sshPart,
    fields.field('maxParallelRuns', 'Runs at the same time on it (optional)', maxParallel, 'From 1 to 64, beside the cap of all runs. Empty: no cap of its own.'),
    fields.general,
    h('div', { class: 'form-actions' }, save, test, cancel),
    result);
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !event.defaultPrevented) done();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fields.clear();
    result.hidden = true;
    try {
      const saved = await withBusy(save, 'Saving…', () => context.api.saveRunner(input()));
      const snapshot = context.state.snapshot;
      if (snapshot) {
        const known = snapshot.runners.some((candidate) => candidate.id === saved.id);
        snapshot.runners = known ? snapshot.runners.map((candidate) => (candidate.id === saved.id ? saved : candidate)) : [...snapshot.runners, saved];
      }
      context.toast(`Runner “${saved.name}” saved`);
      done();
    } catch (error) {
      fields.showError(error);
    }
  });
  return form;
}
