// The editor's Run panel (pipeline-editor.ts): an issue title and description, the run's
// variables, which agents are missing before a run fails, and Start run, which opens the run.

import type { Pipeline, Snapshot } from '../../src/core/api';
import { errorText, type AppContext } from '../app';
import { h, replace } from '../dom';
import { missingAgents, missingAgentsNotice } from './readiness';
import { field, keyValueEditor, textArea, textInput, withBusy } from './form';

/** The Run panel of one editor; `form` is its element. */
export class RunPanel {
  readonly title = textInput('', { name: 'issue-title', placeholder: 'Fix the login redirect' });
  readonly description = textArea('', { rows: 2, name: 'issue-description' });
  readonly start = h('button', { type: 'submit', class: 'primary' }, 'Start run');
  readonly note = h('p', { class: 'meta', role: 'status' });
  readonly readiness = h('div', {});
  variables = keyValueEditor('Variables', {}, { keyLabel: 'Variable', addLabel: 'Add variable' });
  readonly form = h('form', { class: 'panel run-panel', 'aria-label': 'Run this pipeline' });

  /** Builds the panel for `pipeline`, its variables prefilled. */
  render(pipeline: Pipeline): void {
    this.variables = keyValueEditor('Variables', pipeline.variables, { keyLabel: 'Variable', addLabel: 'Add variable' });
    replace(this.form,
      h('h2', {}, 'Run'),
      field('Issue title', this.title, { hint: 'Available as {{issue.title}}.' }),
      field('Issue description', this.description),
      this.variables.element,
      this.readiness,
      this.start,
      this.note);
  }

  /** What the run needs of the saved pipeline: the agents missing, in words. */
  showReadiness(pipeline: Pipeline, snapshot: Snapshot | undefined): void {
    replace(this.readiness, missingAgentsNotice(missingAgents(pipeline, snapshot)));
  }

  show(): void {
    this.form.scrollIntoView({ block: 'start' });
    this.title.focus({ preventScroll: true });
  }

  /** Start run starts the saved pipeline (`saved()`, none: nothing) and opens the run. */
  startRuns(context: AppContext, saved: () => Pipeline | undefined): void {
    this.form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const pipeline = saved();
      if (!pipeline) return;
      const title = this.title.value.trim();
      const description = this.description.value.trim();
      const request = { pipelineId: pipeline.id, variables: this.variables.read(), ...(title ? { issue: { title, ...(description ? { description } : {}) } } : {}) };
      try {
        const run = await withBusy(this.start, 'Starting…', () => context.api.startRun(request));
        context.toast(`Started ${run.pipelineName}`);
        context.navigate(`#/runs/${encodeURIComponent(run.id)}`);
      } catch (error) {
        this.note.textContent = `Not started: ${errorText(error)}`;
      }
    });
  }
}
