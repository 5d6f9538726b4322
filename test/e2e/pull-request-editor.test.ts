// End to end: a person adds a pullRequest step in the Pipeline editor, in the style of the other
// step cards: the GitHub account is picked from the GitHub accounts only (the first one chosen),
// repository, remote, base, title, description and draft are edited, saving stores them, and the
// card's one line says where the pull request goes. A fake GitHub answers the account check.
// Needs `node build.mjs --tests` first; skipped when Chromium is missing (test/helpers/tools.ts).

import * as assert from 'uvu/assert';
import { FakeGitHub } from '../fakes/github';
import { waitFor } from '../helpers/temp';
import { suiteNeeding } from '../helpers/tools';
import { chromium } from './chromium';
import { answerDialogsYes, clickButton, shoot, show, signIn, suiteSession } from './session';

const editor = suiteNeeding('pull request step in the editor (Chromium)', [chromium]);
let fake: FakeGitHub | undefined;
const { need, call } = suiteSession(editor, async (session) => {
  await signIn(session);
  await session.page.evaluate(answerDialogsYes);
  fake = await FakeGitHub.start();
});
editor.after(async () => {
  await fake?.stop();
});

editor('a pull request step is added, its GitHub account picked, its fields saved, and its line says where it goes', async () => {
  const { page } = need();
  const github = await call('saveConnection', { kind: 'github', name: 'Acme GitHub', baseUrl: fake!.url, token: fake!.token });
  const { projects } = await call('snapshot');
  const pipeline = await call('savePipeline', { projectId: projects[0].id, name: 'Ship it', variables: {}, steps: [{ id: 'build', name: 'Build', kind: 'shell', command: 'make' }] });
  await show(page, `#/pipelines/${pipeline.id}`);
  await page.waitFor(`document.querySelector('.step-card')`, 5000, 'the editor');

  await clickButton(page, '.add-steps', 'Add pull request step');
  const card = '.step-card:nth-child(2)';
  assert.equal(await page.evaluate(`[...document.querySelectorAll('${card} [data-field="connectionId"] option')].map((option) => option.textContent)`), ['Choose a GitHub account', 'Acme GitHub']);
  assert.is(await page.evaluate(`document.querySelector('${card} [data-field="connectionId"] select').value`), github.id, 'the only GitHub account is chosen');
  assert.is(await page.evaluate(`document.querySelector('${card} .step-overview').textContent`), 'Pull request to the repository of origin');
  await page.fill(`${card} [data-field="repository"] input`, 'acme/widgets');
  await page.fill(`${card} [data-field="base"] input`, 'develop');
  await page.fill(`${card} [data-field="title"] input`, 'Widgets: {{issue.title}}');
  await page.click(`${card} [data-field="draft"] input`);
  await page.waitFor(`document.querySelector('${card} .step-overview').textContent === 'Pull request to acme/widgets · develop · draft'`, 5000, 'the line to follow the fields');
  await shoot(page, 'pipeline-editor-pull-request');

  await page.click('[data-test="save-pipeline"]');
  let saved: any;
  await waitFor(async () => {
    saved = (await call('snapshot')).pipelines.find((candidate: { id: string }) => candidate.id === pipeline.id);
    return saved.steps.length === 2;
  }, 5000, 'the pipeline saved with its new step');
  assert.equal(saved.steps[1], { id: 'pull-request', name: 'Pull request', kind: 'pullRequest', connectionId: github.id, repository: 'acme/widgets', base: 'develop', title: 'Widgets: {{issue.title}}', draft: true });
});

editor.run();
