// Text generation in the editor (pipeline-editor.ts): the Generate box beside a long text (a
// command, a prompt, a system prompt), where an agent writes it from instructions, and the request
// that fills the text in, cancellable while it runs.

import type { GenerateTarget, PipelineInput, Snapshot } from '../../src/core/api';
import { errorText, type AppContext } from '../app';
import { h } from '../dom';
import { harnessChoices } from './pipelines';
import { noAgentNote } from './readiness';
import { field, selectInput, textArea, uniqueId, withBusy } from './form';
import type { StepCard } from './pipeline-step-card';

const targetLabels: Record<GenerateTarget, string> = { prompt: 'prompt', systemPrompt: 'system prompt', command: 'command' };

/** One generation asked for in a box: what it fills, for which card (none: the pipeline), with what. */
export interface GenerateRequest { target: GenerateTarget; control: HTMLTextAreaElement; card: HTMLElement | null; instructions: string; harnessId: string; button: HTMLButtonElement; cancel: HTMLButtonElement; status: HTMLElement }

/** What a box needs of the editor: the harnesses, the form (its default harness), and who runs a generation. */
interface GenerateBoxHost {
  readonly snapshot: Snapshot | undefined;
  readonly form: HTMLFormElement;
  onGenerate(request: GenerateRequest): void;
}

/** The Generate button beside `control` and the box it opens. */
export function generateBox(editor: GenerateBoxHost, target: GenerateTarget, control: HTMLTextAreaElement, card: HTMLElement | null): HTMLElement {
  const boxId = uniqueId('generate');
  const noAgent = noAgentNote(editor.snapshot)?.textContent ?? undefined;
  const toggle = h('button', { type: 'button', class: 'small generate-toggle', 'aria-expanded': 'false', 'aria-controls': boxId, disabled: Boolean(noAgent), title: noAgent, 'aria-describedby': noAgent && 'editor-no-agent' }, `Generate ${targetLabels[target]}…`);
  const instructions = textArea('', { rows: 2, placeholder: target === 'command' ? 'Run the unit tests with coverage' : 'Review the diff for security problems' });
  const harness = selectInput(harnessChoices(editor.snapshot), editor.snapshot?.settings.defaultHarnessId);
  const run = h('button', { type: 'button', class: 'primary small' }, 'Generate');
  const cancel = h('button', { type: 'button', class: 'small', hidden: true }, 'Cancel');
  const status = h('p', { class: 'meta', role: 'status', 'aria-live': 'polite' });
  const box = h('div', { class: 'generate-box', id: boxId, hidden: true },
    field(`What should the ${targetLabels[target]} do?`, instructions),
    h('div', { class: 'inline-form' }, field('Harness', harness), run, cancel),
    status);
  const close = () => {
    box.hidden = true;
    toggle.setAttribute('aria-expanded', 'false');
    toggle.focus();
  };
  toggle.addEventListener('click', () => {
    // The step's own harness, else the pipeline's default, is the likely choice.
    const preferred = card?.querySelector<HTMLSelectElement>('[data-field="harnessId"] select')?.value || editor.form.querySelector<HTMLSelectElement>(':scope > .panel [data-field="harnessId"] select')?.value;
    if (box.hidden && preferred && Array.from(harness.options).some((option) => option.value === preferred)) harness.value = preferred;
    box.hidden = !box.hidden;
    toggle.setAttribute('aria-expanded', String(!box.hidden));
    if (!box.hidden) instructions.focus();
  });
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && cancel.hidden) close();
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) run.click();
  });
  run.addEventListener('click', () => {
    if (!instructions.value.trim()) {
      status.textContent = 'Write what you want first.';
      instructions.focus();
      return;
    }
    if (!harness.value) {
      status.textContent = 'Enable a harness on the Harnesses screen first.';
      return;
    }
    editor.onGenerate({ target, control, card, instructions: instructions.value, harnessId: harness.value, button: run, cancel, status });
  });
  return h('div', { class: 'generate' }, toggle, box);
}

/**
 * Runs the generations of one editor's boxes: the text fills `control` (as typed, so the form
 * is unsaved), failures are said in the box's status; `pending` holds the requests under way.
 */
export function generationRunner(context: AppContext, editor: { readonly cards: Map<HTMLElement, StepCard>; read(): PipelineInput }, pending: Set<string>): (request: GenerateRequest) => Promise<void> {
  const api = context.api;
  return async ({ target, control, card, instructions, harnessId, button, cancel, status }) => {
    const requestId = `gen-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    const stepId = card ? editor.cards.get(card)?.idInput.value.trim() : undefined;
    const model = card?.querySelector<HTMLInputElement>('[data-field="model"] input')?.value.trim() || undefined;
    pending.add(requestId);
    cancel.hidden = false;
    const onCancel = async () => {
      try {
        await withBusy(cancel, 'Cancelling…', () => api.cancelGenerate(requestId));
      } catch (error) {
        status.textContent = `Could not cancel: ${errorText(error)}`;
      }
    };
    cancel.addEventListener('click', onCancel);
    status.classList.remove('field-error');
    status.textContent = 'The agent is writing…';
    try {
      const text = await withBusy(button, 'Generating…', () => api.generateText({
        target, instructions, harnessId, model, current: control.value || undefined, pipeline: editor.read(), stepId: stepId || undefined, requestId,
      }));
      control.value = text;
      control.dispatchEvent(new Event('input', { bubbles: true }));
      status.textContent = `Filled in the ${targetLabels[target]}: review it, then save.`;
      control.focus();
    } catch (error) {
      status.textContent = `Not generated: ${errorText(error)}`;
      status.classList.add('field-error');
    } finally {
      pending.delete(requestId);
      cancel.removeEventListener('click', onCancel);
      cancel.hidden = true;
    }
  };
}
