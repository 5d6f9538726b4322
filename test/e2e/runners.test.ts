// End to end (issue 25, point 5): Settings → Runners adds a sandbox runner, Test shows the git and
// agent versions found, a project chooses it, a run's page says where it ran; the trigger editor
// says which runner its runs use and why; deleting a runner in use is refused in words. Chromium at
// 1280×800 and 390×844, light and dark. Needs `node build.mjs --tests` first (or FACTORY_E2E_DIST);
// skipped without Chromium or bubblewrap.
import { resolve } from 'node:path';
import * as assert from 'uvu/assert';
import { suiteNeeding } from '../helpers/tools';
import { chromium } from './chromium';
import { answerDialogsYes, clearToasts, clickButton, fillField, shootSizes, show, signIn, suiteSession } from './session';

// The server starts with this process's environment: the fake agent CLIs first on its PATH.
process.env.PATH = `${resolve('test/fakes/bin')}:${process.env.PATH}`;

const runners = suiteNeeding('runners (Chromium)', [chromium, { command: 'bwrap', package: 'bubblewrap' }]);
const { need, call, waitForRun } = suiteSession(runners, async (session) => {
  await signIn(session);
  await session.page.evaluate(answerDialogsYes);
});
const text = (selector: string) => need().page.evaluate<string>(`document.querySelector(${JSON.stringify(selector)})?.innerText ?? ''`);
const panel = '[data-test="runners-panel"]';
const made: { runnerId?: string; projectId?: string } = {};

runners('Settings → Runners adds a sandbox runner; Test shows git and the agents found there', async () => {
  const { page } = need();
  await show(page, '#/settings?section=runners');
  assert.match(await text(panel), /This computer/, 'the built-in runner is listed');
  assert.is(await page.evaluate(`document.querySelector('${panel} [data-test="runner-row"][data-id="local"] button')`), null, 'the built-in one is read-only');
  await page.click('[data-test="add-runner"]');
  await fillField(page, '[data-test="runner-form"]', 'Name', 'Sandbox');
  assert.ok(await page.evaluate(`!document.querySelector('[data-test="runner-sandbox-fields"]').hidden && document.querySelector('[data-test="runner-ssh-fields"]').hidden`), 'a sandbox asks for the network only');
  await clickButton(page, '[data-test="runner-form"]', 'Test');
  await page.waitFor(`document.querySelector('[data-test="runner-test-result"]:not([hidden])')`, 30_000, 'the test result');
  const result = await text('[data-test="runner-test-result"]');
  assert.match(result, /^✓ git version \d/, result);
  assert.match(await text('[data-test="runner-agent"]'), /Claude Code/, 'each agent CLI, found or not');
  await page.evaluate(clearToasts);
  await shootSizes(page, 'runner-test', `document.querySelector('[data-test="runner-test-result"]').scrollIntoView({ block: 'center' })`);

  // A bad ssh runner: each problem at its field.
  await fillField(page, '[data-test="runner-form"]', 'Kind', 'ssh');
  await fillField(page, '[data-test="runner-form"]', 'Port', '70000');
  await fillField(page, '[data-test="runner-form"]', 'Work folder on the host (optional)', 'work');
  await clickButton(page, '[data-test="runner-form"]', 'Add runner');
  await page.waitFor(`document.querySelectorAll('[data-test="runner-form"] .field-error:not([hidden])').length >= 3`, 10_000, 'the field errors');
  const fieldErrors = await page.evaluate<string[]>(`[...document.querySelectorAll('[data-test="runner-form"] label.form-field')].filter((label) => label.querySelector('.field-error:not([hidden])')).map((label) => label.firstElementChild.textContent)`);
  assert.equal(fieldErrors, ['Host', 'Port', 'Work folder on the host (optional)']);
  await page.evaluate(clearToasts);
  await shootSizes(page, 'runner-form-errors', `document.querySelector('[data-test="runner-form"]').scrollIntoView({ block: 'start' })`);

  await fillField(page, '[data-test="runner-form"]', 'Kind', 'sandbox');
  await clickButton(page, '[data-test="runner-form"]', 'Add runner');
  await page.waitFor(`[...document.querySelectorAll('${panel} [data-test="runner-row"]')].some((row) => /Sandbox/.test(row.innerText))`, 10_000, 'the new runner listed');
  made.runnerId = (await call('snapshot')).runners.find((runner: { name: string }) => runner.name === 'Sandbox').id;
  await page.evaluate(clearToasts);
  await shootSizes(page, 'runners', `document.getElementById('settings-runners').scrollIntoView({ block: 'start' })`);
});

runners('a project chooses the runner, and a run’s page says where it ran', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  made.projectId = project.id;
  await show(page, '#/projects');
  await page.click(`.project-row[data-id="${project.id}"] [data-action="edit"]`);
  await page.waitFor(`[...document.querySelectorAll('[data-test="project-runner"] option')].some((option) => option.value === ${JSON.stringify(made.runnerId)})`, 5000, 'the runner offered');
  await page.fill('[data-test="project-runner"]', made.runnerId!);
  await clickButton(page, '.project-form', 'Save project');
  await page.waitFor(`/runs on Sandbox/.test(document.querySelector('.project-row[data-id="${project.id}"]')?.innerText ?? '')`, 10_000, 'the project runs on the sandbox');
  assert.is((await call('snapshot')).projects.find((candidate: { id: string }) => candidate.id === project.id).runnerId, made.runnerId);

  const pipeline = await call('savePipeline', { projectId: project.id, name: 'Sandboxed', variables: {}, steps: [{ id: 'hello', name: 'Hello', kind: 'shell', command: 'echo hello from the sandbox' }] });
  await show(page, `#/pipelines/${pipeline.id}`);
  await page.waitFor(`document.querySelector('[data-test="pipeline-runner"]')`, 10_000, 'the pipeline’s runner menu');
  assert.is(await page.evaluate<string>(`document.querySelector('[data-test="pipeline-runner"]').options[0].textContent`), 'Project’s runner (Sandbox)');
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Where does it run?' } });
  const done = await waitForRun(run.id, ['succeeded', 'failed'], 60_000);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.runnerId, made.runnerId);
  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`/On Sandbox/.test(document.querySelector('[data-test="run-runner"]')?.textContent ?? '')`, 10_000, 'where the run ran');
});

runners('the trigger editor says which runner its runs use and why, as the form changes', async () => {
  const { page } = need();
  await call('saveProject', { ...(await call('snapshot')).projects.find((candidate: { id: string }) => candidate.id === made.projectId), runnerId: undefined });
  await show(page, '#/triggers');
  await clickButton(page, '.triggers-page .toolbar', 'New trigger');
  const line = '[data-test="trigger-runner-line"]';
  await page.waitFor(`document.querySelector('${line}')`, 5000, 'the runner line');
  await fillField(page, '.triggers-page form.editor', 'Runs pipeline', (await call('snapshot')).pipelines.find((candidate: { name: string }) => candidate.name === 'Sandboxed').id);
  assert.is(await text(line), 'Runs use This computer: neither this trigger, its pipeline nor its project names a runner.', 'a webhook with a secret');
  await clickButton(page, '.triggers-page form.editor', 'Clear');
  assert.is(await text(line), 'Runs use the sandbox runner “Sandbox”: this webhook has no secret, so anyone who can reach it writes the issue.');
  assert.match(await page.evaluate<string>(`document.querySelector('[data-test="trigger-runner"]').options[0].textContent`), /^Default: Sandbox$/);
  await page.fill('[data-test="trigger-runner"]', 'local');
  assert.match(await text(line), /^Runs use This computer, chosen above\. Careful: this webhook has no secret/);
  await page.fill('[data-test="trigger-runner"]', '');
  await page.evaluate(clearToasts);
  await shootSizes(page, 'trigger-runner-line', `document.querySelector('${line}').scrollIntoView({ block: 'center' })`);
});

runners('deleting a runner in use is refused in words; unused, it goes', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects.find((candidate: { id: string }) => candidate.id === made.projectId);
  await call('saveProject', { ...project, runnerId: made.runnerId });
  await show(page, '#/settings?section=runners');
  const row = `${panel} [data-test="runner-row"][data-id="${made.runnerId}"]`;
  await page.click(`${row} [data-action="delete"]`);
  await page.waitFor(`!document.querySelector('${row} [data-test="runner-problem"]').hidden`, 10_000, 'the refusal');
  assert.match(await text(`${row} [data-test="runner-problem"]`), /used by the project .*choose another runner there first/);
  await call('saveProject', { ...project, runnerId: undefined });
  await page.click(`${row} [data-action="delete"]`);
  await page.waitFor(`!document.querySelector('${row}')`, 10_000, 'the runner gone');
});

runners.run();
