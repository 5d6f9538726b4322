// End to end (issue 24.3-24.5): a step waiting out the model's usage limit says so on the run page
// ("rate limited, resumes 14:05", Resume now / Stop waiting) and in Runs; Resume now goes on in the
// agent's session; the run's usage is shown on the run page and in Runs. Chromium at 1280×800 and
// 390×844. Needs `node build.mjs --tests` first (or FACTORY_E2E_DIST); skipped without Chromium.
import { join, resolve } from 'node:path';
import * as assert from 'uvu/assert';
import { makeTempDir, removeTempDir } from '../helpers/temp';
import { suiteNeeding } from '../helpers/tools';
import { chromium } from './chromium';
import { clearToasts, shoot, shootPhoneBoth, show, signIn, suiteSession } from './session';

// The server starts with this process's environment: the fake CLIs first on its PATH.
process.env.PATH = `${resolve('test/fakes/bin')}:${process.env.PATH}`;

const liveness = suiteNeeding('liveness and cost (Chromium)', [chromium]);
const folder = makeTempDir('factory-e2e-liveness');
liveness.after(() => removeTempDir(folder));
const { need, call, waitForRun } = suiteSession(liveness, signIn);
const text = (selector: string) => need().page.evaluate<string>(`document.querySelector(${JSON.stringify(selector)})?.innerText ?? ''`);

liveness('a rate-limited step says when it resumes, Resume now goes on, and the cost shows on the run page and in Runs', async () => {
  const { page } = need();
  const harness = (await call('snapshot')).harnesses.find((candidate: { id: string }) => candidate.id === 'claude');
  await call('saveHarness', { ...harness, env: { FAKE_MODE: 'limit', FAKE_LIMIT_STATE: join(folder, 'count'), FAKE_LIMIT_TIMES: '1', FAKE_RESETS_AT: String(Math.floor(Date.now() / 1000) + 3600) } });
  const pipeline = await call('savePipeline', {
    projectId: (await call('snapshot')).projects[0].id, name: 'Limits', variables: {},
    steps: [{ id: 'code', name: 'Write the code', kind: 'agent', prompt: 'Fix it', harnessId: 'claude' }],
  });
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Slow provider' } });
  await waitForRun(run.id, ['waiting']);

  await show(page, '#/runs');
  await page.waitFor(`document.querySelector('[data-test="run-row"] [data-test="liveness"]')`, 10_000, 'the liveness in the Runs row');
  assert.match(await text('[data-test="run-row"] [data-test="liveness"]'), /^rate limited, resumes (\d+ \w+, )?\d\d?:\d\d(\s?[AP]M)?$/);
  assert.match(await text('[data-test="run-row"] [data-test="run-usage"]'), /tokens · \$0\.002/);

  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('[data-test="rate-limit-card"]')`, 10_000, 'the rate-limit card');
  const card = await text('[data-test="rate-limit-card"]');
  assert.match(card, /Write the code:\s+rate limited, resumes (\d+ \w+, )?\d\d?:\d\d/, card);
  assert.match(card, /not a failed attempt/);
  assert.match(await text('[data-test="run-usage"]'), /^Used .*tokens · \$0\.002$/);
  await page.evaluate(clearToasts);
  await shoot(page, 'rate-limited-run');
  await page.viewport('phone');
  await show(page, '#/runs');
  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('[data-test="rate-limit-card"]')`, 10_000, 'the rate-limit card on a phone');
  await shootPhoneBoth(page, 'rate-limited-run');
  const cardBox = await page.evaluate<{ right: number } | null>(`(() => { const r = document.querySelector('[data-test="rate-limit-card"]').getBoundingClientRect(); return { right: r.right }; })()`);
  assert.ok(cardBox && cardBox.right <= 390, 'the card fits the phone');
  await page.viewport('desktop');

  await page.click('[data-test="resume-now"]');
  const done = await waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  assert.is(done.steps[0].attempt, 1);
  await page.waitFor(`!document.querySelector('[data-test="rate-limit-card"]') && /succeeded/i.test(document.querySelector('[data-test="run-status"]')?.textContent ?? '')`, 10_000, 'the card gone once it went on');
  assert.match(await text('[data-test="run-usage"]'), /^Used .*tokens · \$0\.014$/, 'both parts of the attempt');
});

liveness('an agent step paused at its budget shows what it spent on its card; Continue goes on with the cap raised', async () => {
  const { page } = need();
  const harness = (await call('snapshot')).harnesses.find((candidate: { id: string }) => candidate.id === 'claude');
  await call('saveHarness', { ...harness, env: { FAKE_MODE: 'spend', FAKE_SPEND_TOKENS: '1000', FAKE_SPEND_TURNS: '400', FAKE_SPEND_MS: '10', FAKE_SPEND_RESUMED_TURNS: '2' } });
  const pipeline = await call('savePipeline', {
    projectId: (await call('snapshot')).projects[0].id, name: 'Capped', variables: {},
    steps: [{ id: 'code', name: 'Write the code', kind: 'agent', prompt: 'Fix it', harnessId: 'claude', budget: { maxTokens: 5000 } }],
  });
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Expensive issue' } });
  await waitForRun(run.id, ['waiting']);

  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('[data-test="budget-card"]')`, 10_000, 'the budget card');
  const card = await text('[data-test="budget-card"]');
  assert.match(card, /Write the code: token budget reached/, card);
  assert.match(card, /Spent [\d,]+ of 5,000 tokens/, card);
  assert.ok(!(await text('[data-test="approval"]')), 'no approval card besides it');
  assert.not.match(await text('.timeline'), /working/, 'a paused step is not said to be working');
  await page.evaluate(clearToasts);
  await shoot(page, 'budget-paused-run');
  await page.viewport('phone');
  await show(page, '#/runs');
  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('[data-test="budget-card"]')`, 10_000, 'the budget card on a phone');
  await shootPhoneBoth(page, 'budget-paused-run');
  await page.viewport('desktop');

  await page.click('[data-test="budget-continue"]');
  const done = await waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  await page.waitFor(`!document.querySelector('[data-test="budget-card"]')`, 10_000, 'the card gone once it went on');
});

liveness.run();
