// The Projects screen: the folders pipelines run in. A list (edit, delete, open the folder) with the
// run branches each project's repository keeps (work found on no other branch, from runs whose
// worktree is gone), and one form that adds a project or edits the chosen one. The view owns the
// DOM; the controller joins it to the API.

import type { Project, ProjectInput, RunBranch, Runner } from '../../src/core/api';
import { errorText, type AppContext, type ScreenFactory } from '../app';
import { h, replace, timeElement } from '../dom';
import { confirmAction } from './dialog';
import { mayDiscard, watchForm } from './drafts';
import { checkbox, clearFieldErrors, field, placeProblems, showFieldError, textInput, withBusy } from './form';
import { plainRunnerName, runnerChoices } from './runner-words';

const commits = (count: number) => `${count} commit${count === 1 ? '' : 's'}`;

/** A project's kept run branches (or why they could not be listed), with their actions. */
function branchList(branches: RunBranch[] | string | undefined): HTMLElement | null {
  if (typeof branches === 'string') return h('p', { class: 'field-error' }, `Could not list the run branches: ${branches}`);
  if (!branches?.length) return null;
  const merged = branches.filter((branch) => branch.ahead === 0).length;
  return h('div', { class: 'run-branches', 'data-test': 'run-branches' },
    h('h3', {}, 'Kept run branches'),
    h('ul', {}, branches.map((branch) => h('li', { 'data-branch': branch.branch },
      h('code', {}, branch.branch),
      h('span', { class: 'meta' }, branch.runTitle ? h('a', { href: `#/runs/${encodeURIComponent(branch.runId)}` }, branch.runTitle) : 'run deleted',
        ` · ${branch.ahead ? `${commits(branch.ahead)} on no other branch` : 'merged'} · last commit `, timeElement(branch.lastCommitAt), branch.pushed ? ' · pushed' : ' · not pushed'),
      h('button', { type: 'button', class: 'danger', 'data-action': 'delete-branch', 'aria-label': `Delete ${branch.branch}` }, 'Delete')))),
    merged ? h('button', { type: 'button', 'data-action': 'delete-merged' }, `Delete merged branches (${merged})`) : null);
}

class ProjectsView {
  readonly element: HTMLElement;
  readonly list = h('ul', { class: 'list project-list', 'aria-label': 'Projects' });
  readonly empty = h('div', { class: 'empty' }, 'No projects yet. Add the folder of a repository with the form below; pipelines run in it.');
  readonly form: HTMLFormElement;
  readonly formTitle = h('h2', {}, 'Add a project');
  readonly summary = h('div', { class: 'form-summary', role: 'alert', hidden: true });
  readonly name = textInput('', { name: 'name', required: true, autocomplete: 'off' });
  readonly path = textInput('', { name: 'path', required: true, placeholder: '/home/me/code/app', spellcheck: 'false' });
  readonly choose = h('button', { type: 'button', 'data-action': 'choose' }, 'Choose…');
  readonly worktrees = checkbox('Run each run in its own git worktree', false, { name: 'worktrees', 'data-key': 'worktrees' });
  readonly setup = textInput('', { name: 'setupCommand', placeholder: 'npm ci', spellcheck: 'false' });
  readonly runner = h('select', { name: 'runnerId', 'data-test': 'project-runner' });
  readonly save = h('button', { type: 'submit', class: 'primary' }, 'Add project');
  readonly cancel = h('button', { type: 'button', hidden: true }, 'Cancel editing');

  constructor(desktop: boolean) {
    this.form = h('form', { class: 'panel project-form', novalidate: true },
      this.formTitle,
      this.summary,
      h('div', { class: 'field-grid' },
        field('Name', this.name, { field: 'name' }),
        field('Folder', this.path, { field: 'path', hint: 'An absolute path, usually a git repository.', extra: desktop ? this.choose : undefined }),
        field('Setup command', this.setup, { field: 'setupCommand', hint: 'Optional: runs in the workspace before the first step.' }),
        field('Runner', this.runner, { field: 'runnerId', hint: 'Where its runs execute; a pipeline or trigger may choose another. Settings → Runners adds one.' }),
        this.worktrees.element),
      h('div', { class: 'toolbar form-actions' }, this.save, this.cancel));
    this.element = h('section', { class: 'page projects-page' }, h('h1', {}, 'Projects'), this.empty, this.list, this.form);
  }

  /** The runner menu: the default (this computer), then each runner; keeps what is chosen. */
  fillRunners(runners: readonly Runner[], chosen = this.runner.value): void {
    replace(this.runner, runnerChoices(runners, `Default: ${plainRunnerName(runners, undefined)}`).map(([value, label]) => h('option', { value }, label)));
    this.runner.value = chosen;
    if (this.runner.value !== chosen) this.runner.value = '';
  }

  renderList(projects: Project[], pipelineCounts: Map<string, number>, branches: Map<string, RunBranch[] | string>, desktop: boolean, runners: readonly Runner[]): void {
    this.empty.hidden = projects.length > 0;
    this.list.hidden = projects.length === 0;
    replace(this.list, projects.map((project) => {
      const count = pipelineCounts.get(project.id) ?? 0;
      return h('li', { class: 'project-row', 'data-id': project.id },
        h('div', { class: 'row-main' },
          h('strong', {}, project.name),
          h('code', { class: 'path' }, project.path),
          h('span', { class: 'meta' },
            `${count} pipeline${count === 1 ? '' : 's'} · ${project.worktrees ? 'git worktree per run' : 'runs in the folder'}`,
            project.setupCommand ? ' · setup: ' : '', project.setupCommand ? h('code', {}, project.setupCommand) : null,
            project.runnerId ? ` · runs on ${plainRunnerName(runners, project.runnerId)}` : ''),
          h('p', { class: 'field-error row-error', role: 'alert', hidden: true }),
          branchList(branches.get(project.id))),
        h('div', { class: 'row-actions' },
          desktop ? h('button', { type: 'button', 'data-action': 'open', 'aria-label': `Open the folder of ${project.name}` }, 'Open folder') : null,
          h('button', { type: 'button', 'data-action': 'edit', 'aria-label': `Edit ${project.name}` }, 'Edit'),
          h('button', { type: 'button', class: 'danger', 'data-action': 'delete', 'aria-label': `Delete ${project.name}` }, 'Delete')));
    }));
  }

  fill(project: Project | undefined, runners: readonly Runner[]): void {
    clearFieldErrors(this.form);
    this.summary.hidden = true;
    this.formTitle.textContent = project ? `Edit ${project.name}` : 'Add a project';
    this.save.textContent = project ? 'Save project' : 'Add project';
    this.cancel.hidden = !project;
    this.name.value = project?.name ?? '';
    this.path.value = project?.path ?? '';
    this.worktrees.input.checked = project?.worktrees ?? false;
    this.setup.value = project?.setupCommand ?? '';
    this.fillRunners(runners, project?.runnerId ?? '');
  }

  read(id: string): ProjectInput {
    const input: ProjectInput = { id, name: this.name.value, path: this.path.value, worktrees: this.worktrees.input.checked };
    if (this.setup.value.trim()) input.setupCommand = this.setup.value;
    if (this.runner.value) input.runnerId = this.runner.value;
    return input;
  }

  /** Shows a refused save: each problem at its field, the rest in the summary above the form. */
  showErrors(failure: unknown): void {
    clearFieldErrors(this.form);
    const controls: HTMLElement[] = [];
    const rest = placeProblems(failure, (problem) => {
      const container = this.form.querySelector<HTMLElement>(`[data-field="${CSS.escape(problem.field)}"]`);
      if (!container) return false;
      const control = showFieldError(container, problem.message);
      if (control) controls.push(control);
      return true;
    });
    replace(this.summary, rest.length ? h('ul', {}, rest.map((line) => h('li', {}, line))) : null);
    this.summary.hidden = rest.length === 0;
    controls[0]?.focus();
  }
}

export const projectsScreen: ScreenFactory = (context: AppContext) => {
  const view = new ProjectsView(context.desktop);
  let editingId = '';

  const projects = () => context.state.snapshot?.projects ?? [];
  const runners = () => context.state.snapshot?.runners ?? [];
  // Run branches per project, read again when the projects or the runs' worktrees change.
  const branches = new Map<string, RunBranch[] | string>();
  let branchesFor = '';
  const render = () => {
    const counts = new Map<string, number>();
    for (const pipeline of context.state.snapshot?.pipelines ?? []) counts.set(pipeline.projectId, (counts.get(pipeline.projectId) ?? 0) + 1);
    view.renderList(projects(), counts, branches, context.desktop, runners());
    view.fillRunners(runners());
    const runs = context.state.snapshot?.runs ?? [];
    const key = JSON.stringify([projects().map((project) => project.id), runs.map((run) => [run.id, run.branch, Boolean(run.workspace)])]);
    if (key !== branchesFor) {
      branchesFor = key;
      void loadBranches();
    }
  };
  async function loadBranches(): Promise<void> {
    await Promise.all(projects().map(async (project) => {
      const listed = await context.api.listRunBranches(project.id).catch(errorText);
      branches.set(project.id, typeof listed === 'string' ? listed : listed.filter((branch) => !branch.inUse));
    }));
    render();
  }

  // The form is a draft (drafts.ts): filling it with another project asks first when it holds changes.
  const draft = watchForm(view.form);
  const edit = (project: Project | undefined) => {
    editingId = project?.id ?? '';
    view.fill(project, runners());
    draft.saved();
    if (project) view.name.focus();
  };

  view.list.addEventListener('click', async (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    const row = button?.closest<HTMLElement>('[data-id]');
    if (!button || !row) return;
    const project = projects().find((candidate) => candidate.id === row.dataset.id);
    if (!project) return;
    if (button.dataset.action === 'edit' && await mayDiscard(draft, editingId ? 'Discard your changes to this project?' : 'Discard the project you were adding?')) edit(project);
    if (button.dataset.action === 'open') context.api.openPath(project.path).catch((failure) => context.toast(errorText(failure), 'error'));
    const kept = branches.get(project.id);
    const listed = Array.isArray(kept) ? kept : [];
    const branch = button.dataset.action === 'delete-branch' ? listed.find((candidate) => candidate.branch === button.closest<HTMLElement>('[data-branch]')?.dataset.branch) : undefined;
    const merged = button.dataset.action === 'delete-merged' ? listed.filter((candidate) => candidate.ahead === 0).length : 0;
    if (branch || merged) {
      const question = branch ? { title: `Delete the branch ${branch.branch}?`, body: branch.ahead ? `${commits(branch.ahead)} found on no other branch will be lost.` : 'Its commits are all on other branches: nothing is lost.' }
        : { title: `Delete ${merged} run branch${merged === 1 ? '' : 'es'} whose commits are all on other branches?`, body: 'Nothing is lost.' };
      if (!await confirmAction({ ...question, confirm: 'Delete', danger: true })) return;
      try {
        const deleted = await withBusy(button, 'Deleting…', () => context.api.deleteRunBranches(project.id, branch?.branch ?? 'merged'));
        context.toast(deleted.length === 1 ? `Deleted ${deleted[0]}` : `Deleted ${deleted.length} branches`);
      } catch (failure) {
        context.toast(errorText(failure), 'error');
      }
      await loadBranches();
    }
    if (button.dataset.action === 'delete') {
      if (!await confirmAction({ title: `Delete the project “${project.name}”?`, body: 'Its folder is not touched.', confirm: 'Delete', danger: true })) return;
      const error = row.querySelector<HTMLElement>('.row-error')!;
      error.hidden = true;
      try {
        await withBusy(button, 'Deleting…', () => context.api.deleteProject(project.id));
        if (editingId === project.id) edit(undefined);
        context.toast(`Deleted ${project.name}`);
      } catch (failure) {
        error.textContent = errorText(failure);
        error.hidden = false;
      }
    }
  });

  view.choose.addEventListener('click', async () => {
    try {
      const folder = await withBusy(view.choose, 'Choosing…', () => context.api.pickDirectory());
      if (folder) {
        view.path.value = folder;
        if (!view.name.value.trim()) view.name.value = folder.split('/').filter(Boolean).pop() ?? '';
      }
    } catch (failure) {
      context.toast(errorText(failure), 'error');
    }
  });

  view.cancel.addEventListener('click', () => edit(undefined));
  view.form.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && editingId) edit(undefined);
  });

  view.form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const saved = await withBusy(view.save, 'Saving…', () => context.api.saveProject(view.read(editingId)));
      context.toast(editingId ? `Saved ${saved.name}` : `Added ${saved.name}`);
      edit(undefined);
    } catch (failure) {
      view.showErrors(failure);
    }
  });

  render();
  return { element: view.element, update: render };
};
