// End to end: the pipeline screens at the level of Linear, in Chromium at 1280×800 and 390×844,
// light and dark. Errors name their field in words, at the field and in the form's summary, and go
// once the field is fixed; a missing coding agent is said before a run fails (templates, editor,
// Run panel, Harnesses) and Generate is off with the reason; the Pipelines list shows each
// pipeline's last run, a Run button and a ⋯ menu, and tells equal names apart; the editor's step
// cards are one line each, opened one at a time, its heading follows a rename, and on a phone the
// Run panel is one tap away. Needs `node build.mjs --tests` first; skipped when Chromium is
// missing (test/helpers/tools.ts).

import * as assert from 'uvu/assert';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { answerDialogsYes, callAs, clickButton, mainText, settle, shoot, shootPhone, shootPhoneBoth, show, signIn, suiteSession } from './session';

const editor = suiteNeeding('pipeline screens (Chromium)', [chromium]);
const { need, call, waitForRun } = suiteSession(editor, async (session) => {
  await signIn(session);
  await session.page.evaluate(answerDialogsYes);
  // No coding agent on this machine, whatever is installed where the tests run.
  for (const harness of (await callAs(session, 'snapshot')).harnesses) await callAs(session, 'saveHarness', { ...harness, command: `factory-missing-${harness.id}` });
  await callAs(session, 'detectHarnesses');
});

const projectId = async (): Promise<string> => (await call('snapshot')).projects[0].id;
const texts = (page: Page, selector: string) => page.evaluate<string[]>(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((element) => element.textContent)`);
/** The message of a call the server refuses. */
async function refusal(method: string, ...args: unknown[]): Promise<string> {
  try {
    await call(method, ...args);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${method} was accepted`);
}

async function openEditor(page: Page, id: string): Promise<void> {
  await show(page, `#/pipelines/${id}`);
  await page.waitFor(`document.querySelector('.step-card')`, 5000, 'the editor');
}

editor('errors name their field in words, at the field and in the summary, and go once it is fixed', async () => {
  const { page } = need();
  const pipeline = await call('savePipeline', {
    projectId: await projectId(), name: 'Words', variables: {},
    steps: [{ id: 'prepare', name: 'Prepare', kind: 'shell', command: 'echo "Working on {{issue.title}}"' }, { id: 'check', name: 'Check', kind: 'shell', command: 'make check' }],
  });
  await openEditor(page, pipeline.id);
  const second = '.step-card:nth-child(2)';
  await page.click(`${second} [data-action="toggle"]`);
  await page.fill(`${second} [data-field="id"] input`, 'Bad Id!');
  await page.evaluate(`document.activeElement.blur()`);
  const error = await page.waitFor<string>(`document.querySelector('${second} [data-field="id"] [data-test="field-error"]')?.textContent`, 5000, 'the id error on blur');
  // At the field inside its card, which says the step; in the summary and the API with the step.
  assert.is(error, 'The id `Bad Id!` may use only a–z, 0–9, - and _, starting with a letter (at most 40)');
  await page.evaluate(`document.querySelector('${second}').scrollIntoView({ block: 'center' })`);
  await shoot(page, 'pipeline-editor-field-error');

  // Fixed while typing: the error goes without leaving the field.
  await page.fill(`${second} [data-field="id"] input`, 'check');
  await page.waitFor(`!document.querySelector('${second} [data-test="field-error"]') && document.activeElement?.closest('[data-field="id"]')`, 5000, 'the error gone while the field keeps focus');

  // A refused save: the summary in words, the first card with a problem opened.
  await page.click(`.step-card:nth-child(1) [data-action="toggle"]`);
  await page.fill(`.step-card:nth-child(1) [data-test="step-command"]`, ' ');
  await page.click(`${second} [data-action="toggle"]`);
  await page.fill(`${second} [data-field="name"] input`, '');
  await page.click('[data-test="save-pipeline"]');
  await page.waitFor(`document.querySelector('.form-summary:not([hidden]) li')`, 5000, 'the summary');
  assert.equal(await texts(page, '.form-summary li'), ['Step 1: the command is empty: a shell step runs a command', 'Step 2: the name is empty: give the step a name']);
  assert.is(await page.evaluate(`document.querySelector('.form-summary strong').textContent`), 'Not saved: 2 problems.');
  assert.equal(await page.evaluate(`[...document.querySelectorAll('.step-card')].map((card) => card.classList.contains('open'))`), [true, false]);
  const shown = await mainText(page);
  assert.not.match(shown, 'steps.');
  assert.not.match(shown, '``');
  await page.evaluate(`window.scrollTo(0, 0)`);
  await shoot(page, 'pipeline-editor-summary');
  await shootPhone(page, 'pipeline-editor-summary');
  // Each problem fixed at its field leaves the summary; the last one takes it away.
  await page.click('.form-summary li:nth-child(2) button');
  assert.equal(await page.evaluate(`[...document.querySelectorAll('.step-card')].map((card) => card.classList.contains('open'))`), [false, true]);
  await page.fill(`${second} [data-field="name"] input`, 'Check');
  await page.waitFor(`document.querySelectorAll('.form-summary li').length === 1`, 5000, 'one problem left in the summary');
  await page.fill(`.step-card:nth-child(1) [data-test="step-command"]`, 'true');
  await page.evaluate(`document.activeElement.blur()`);
  await page.waitFor(`document.querySelector('.form-summary').hidden`, 5000, 'the summary gone');

  // The same words reach the remote API, without paths in the words and without empty quotes.
  const saved = await refusal('savePipeline', { projectId: await projectId(), name: 'x', variables: {}, steps: [{ id: 'ok', name: 'Ok', kind: 'shell', command: 'true' }, { id: 'Bad Id!', name: 'B', kind: 'shell', command: 'true' }] });
  assert.match(saved, '{"error":"Step 2: the id `Bad Id!` may use only a–z, 0–9, - and _');
  assert.match(saved, '"fields":[{"field":"steps.#2.id","message":"Step 2: the id', 'the path beside the words, for the editor');
  const started = await refusal('startRun', { pipelineId: '' });
  assert.match(started, '{"error":"Run not started:\\nChoose the pipeline to run","fields":[{"field":"pipelineId"');
  const trigger = await refusal('saveTrigger', { name: 'T', kind: 'webhook', enabled: true, pipelineId: '' });
  assert.match(trigger, '\\nChoose the pipeline the trigger runs"');
  for (const message of [saved, started, trigger]) assert.not.match(JSON.parse(message.slice(message.indexOf('{'))).error, /(^|\n)[a-z][\w.#]*: /, 'no field path before the words');
  for (const message of [saved, started, trigger]) assert.not.match(message, '``');
});

editor('a missing agent is said before a run fails, with how to install it; Generate is off with the reason', async () => {
  const { page } = need();
  await show(page, '#/pipelines');
  await page.evaluate(`(() => { const select = document.querySelector('select[name="template"]'); select.value = 'feature'; select.dispatchEvent(new Event('change', { bubbles: true })); })()`);
  const notice = await page.waitFor<string>(`document.querySelector('.pipelines-page [data-test="missing-agents"]')?.textContent`, 5000, 'the template notice');
  assert.is(notice, 'The Feature template uses Claude Code, which is not installed here. Install it, then choose Detect again on Harnesses:npm install -g @anthropic-ai/claude-code');
  assert.ok(await page.evaluate(`[...document.querySelectorAll('.pipelines-page .toolbar button')].find((button) => button.textContent === 'Generate with an agent').disabled`), 'Generate is off');
  assert.match(await mainText(page), 'Generate needs a coding agent, and none is installed');
  await shoot(page, 'pipelines-readiness');

  const pipeline = await call('savePipeline', {
    projectId: await projectId(), name: 'Agents', variables: {},
    steps: [
      { id: 'plan', name: 'Plan', kind: 'agent', prompt: 'Plan {{issue.title}}', model: 'opus' },
      { id: 'build', name: 'Build', kind: 'agent', prompt: 'Build it', harnessId: 'codex' },
      { id: 'ship', name: 'Ship', kind: 'approval', message: 'Ship it?' },
    ],
  });
  await openEditor(page, pipeline.id);
  assert.equal(await texts(page, '.run-panel [data-test="missing-agents"] p'), [
    'Step “Plan” uses Claude Code, which is not installed here. Install it, then choose Detect again on Harnesses:npm install -g @anthropic-ai/claude-code',
    'Step “Build” uses Codex, which is not installed here. Install it, then choose Detect again on Harnesses:npm install -g @openai/codex',
  ]);
  assert.equal(await texts(page, '.step-overview'), ['Claude Code, not installed · opus · Plan {{issue.title}}', 'Codex, not installed · default model · Build it', 'Ship it?']);
  assert.ok(await page.evaluate(`[...document.querySelectorAll('.generate-toggle')].every((button) => button.disabled)`), 'Generate prompt… is off');
  await shoot(page, 'pipeline-editor-readiness');

  await show(page, '#/harnesses');
  const states = await texts(page, '.harness .install');
  assert.is(states.length, 6);
  for (const state of states) assert.match(state, /^○ Not installed · install with /);
  assert.match(states[0]!, 'npm install -g @anthropic-ai/claude-code');
  assert.match(states[4]!, 'curl https://cursor.com/install -fsS | bash');
  const colours = await page.evaluate<string[]>(`[getComputedStyle(document.querySelector('[data-test="not-installed"]')).color, getComputedStyle(document.querySelector('.intro')).color]`);
  assert.is(colours[0], colours[1], 'a missing CLI is muted, not red');
  await shoot(page, 'harnesses-not-installed');
  await shootPhone(page, 'harnesses-not-installed');
});

editor('the Pipelines list shows the last run, a Run button and a ⋯ menu, and tells equal names apart', async () => {
  const { page } = need();
  const project = await projectId();
  const steps = [{ id: 'hello', name: 'Hello', kind: 'shell', command: 'echo "Hello {{issue.title}}"' }];
  const first = await call('savePipeline', { projectId: project, name: 'Twin', variables: {}, steps });
  const second = await call('savePipeline', { projectId: project, name: 'Twin', variables: {}, steps });
  const run = await call('startRun', { pipelineId: first.id, issue: { title: 'List' } });
  await waitForRun(run.id, ['succeeded']);
  await show(page, '#/pipelines');
  const row = (id: string) => `[data-test="pipeline-row"][data-id="${id}"]`;
  await page.waitFor(`document.querySelector('${row(first.id)} [data-test="last-run"]')?.textContent === 'succeeded' && document.querySelector('${row(second.id)}')`, 5000, 'both twins, the first with its last run');
  assert.is(await page.evaluate(`document.querySelector('${row(first.id)} [data-test="last-run"] .glyph').dataset.glyph`), '✓');
  assert.is(await page.evaluate(`document.querySelector('${row(second.id)} .last-run').textContent`), 'Never run');
  assert.equal((await texts(page, `${row(first.id)} .row-title, ${row(second.id)} .row-title`)).sort(), [`Twin · pl_…${first.id.slice(-3)}`, `Twin · pl_…${second.id.slice(-3)}`].sort());
  assert.not.ok(await page.evaluate(`[...document.querySelectorAll('.pipeline-row button')].some((button) => button.textContent === 'Delete' && !button.closest('details'))`), 'Delete is in the menu');
  await page.click(`${row(second.id)} summary`);
  await settle(page);
  assert.equal(await page.evaluate(`[...document.querySelectorAll('${row(second.id)} .menu-list button')].filter((button) => button.offsetParent).map((button) => button.textContent)`), ['Duplicate', 'Export…', 'Delete']);
  await shoot(page, 'pipelines-list');
  await shootPhone(page, 'pipelines-list');
  await page.click(`${row(second.id)} [data-action="delete"]`);
  await page.waitFor(`!document.querySelector('${row(second.id)}')`, 5000, 'the twin deleted');
  // Undone from its toast, not asked first (phone-and-undo.test.ts).
  assert.match(await page.evaluate<string>(`[...document.querySelectorAll('.toast')].map((toast) => toast.textContent).join(' | ')`), 'Deleted “Twin”Undo');

  // Run: the editor opens with its Run panel in focus.
  await page.click(`${row(first.id)} [data-action="run"]`);
  await page.waitFor(`document.activeElement?.name === 'issue-title'`, 5000, 'the Run panel in focus');
});

editor('step cards are one line each, opened one at a time; the heading follows a rename; a phone reaches Run at once', async () => {
  const { page } = need();
  const pipeline = await call('savePipeline', {
    projectId: await projectId(), name: 'Cards', variables: {},
    steps: [
      { id: 'prepare', name: 'Prepare', kind: 'shell', command: 'npm ci\nnpm test' },
      { id: 'fix', name: 'Fix', kind: 'agent', prompt: 'Fix the failing tests', harnessId: 'claude', model: 'sonnet' },
      { id: 'review', name: 'Review', kind: 'approval', message: 'Merge the fix?\nIt passed.' },
    ],
  });
  await openEditor(page, pipeline.id);
  assert.equal(await texts(page, '.step-toggle strong'), ['Shell · Prepare', 'Agent · Fix', 'Approval · Review']);
  assert.equal(await texts(page, '.step-overview'), ['npm ci', 'Claude Code, not installed · sonnet · Fix the failing tests', 'Merge the fix?']);
  const heights = await page.evaluate<number[]>(`[...document.querySelectorAll('.step-card')].map((card) => card.getBoundingClientRect().height)`);
  assert.ok(heights.every((height) => height < 48), `one line each: ${heights}`);
  await page.click('.step-card:nth-child(2) [data-action="toggle"]');
  await page.click('.step-card:nth-child(3) [data-action="toggle"]');
  assert.equal(await page.evaluate(`[...document.querySelectorAll('.step-card')].map((card) => card.querySelector('.step-body').hidden)`), [true, true, false]);
  await page.click('.step-card:nth-child(3) [data-action="toggle"]');
  await shoot(page, 'pipeline-editor-cards');

  // A new shell step starts with a command that works, and opens alone.
  await clickButton(page, '.add-steps', 'Add shell step');
  assert.is(await page.evaluate(`document.querySelector('.step-card:nth-child(4) [data-test="step-command"]').value`), 'echo "Working on {{issue.title}}"');
  assert.equal(await page.evaluate(`[...document.querySelectorAll('.step-card')].map((card) => card.classList.contains('open'))`), [false, false, false, true]);

  // Renamed and saved: the heading and the breadcrumb follow.
  await page.fill('[data-test="pipeline-name"]', 'Cards renamed');
  await page.click('[data-test="save-pipeline"]');
  await page.waitFor(`document.querySelector('.editor-header h1').textContent === 'Cards renamed'`, 5000, 'the heading after the save');
  assert.match(await page.evaluate<string>(`document.querySelector('.breadcrumb').textContent`), 'Pipelines / Cards renamed');

  // A phone: Save and Run stay at the top; Run brings the Run panel into view.
  await page.viewport('phone');
  await page.evaluate(`window.scrollTo(0, 0)`);
  await settle(page);
  await shootPhoneBoth(page, 'pipeline-editor');
  await page.evaluate(`window.scrollTo(0, 900)`);
  await settle(page);
  const header = await page.evaluate<number>(`document.querySelector('.editor-header').getBoundingClientRect().top`);
  assert.ok(header >= 0 && header < 10, `the header stays at the top: ${header}`);
  await page.click('.run-jump');
  await settle(page);
  const panel = await page.evaluate<number>(`document.querySelector('.run-panel').getBoundingClientRect().top`);
  assert.ok(panel >= 0 && panel < 844, `the Run panel in view: ${panel}`);
  assert.is(await page.evaluate(`document.activeElement?.name`), 'issue-title');
  await shootPhoneBoth(page, 'pipeline-editor-run');
  await page.viewport('desktop');
});

editor.run();
