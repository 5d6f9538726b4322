// End to end: a run's pull request on the Run page (number, state pill, link opening outside the
// app) with its follow-ups, a follow-up's "Follow-up of #12 (review by @alice)", and the Runs list's
// "#12 · merged" beside the issue, at 1280×800 and 390×844. The runs are made by the engine (shell
// steps), then the server is stopped and their run.json given the pull request a pullRequest step
// records (StepRun.pullRequest) and the follow-up origin a github-review trigger sets (Run.followUp),
// and the server started again on the same data folder: the seam that keeps GitHub out of this suite.
// Screenshots under test-output/screenshots/pull-request-*.png.
// Needs `node build.mjs --tests` first, and chromium on PATH (skipped without it, failed under CI).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { Run } from '../../src/core/api';
import { suiteNeeding } from '../helpers/tools';
import { chromium } from './chromium';
import { callAs, screenshots, settle, show, signIn, startServer, stopServer, suiteSession, waitForRunAs, type Session } from './session';

const made: { openedId?: string; followUpId?: string } = {};
const pullUrl = 'https://github.com/octo/repo/pull/12';

/** Makes two runs, stops the server, gives them a pull request and a follow-up origin, starts it again, signs in. */
async function seed(session: Session): Promise<void> {
  const { projects } = await callAs(session, 'snapshot');
  const step = (id: string) => ({ id, name: id, kind: 'shell', command: 'echo done' });
  const pipeline = await callAs(session, 'savePipeline', { projectId: projects[0].id, name: 'Feature', variables: {}, steps: [step('implement'), step('open-pr')] });
  const opened = await callAs<Run>(session, 'startRun', { pipelineId: pipeline.id, issue: { title: 'Add dark mode', key: 'ENG-7', url: 'https://linear.app/acme/issue/ENG-7' } });
  await waitForRunAs(session, opened.id, ['succeeded']);
  const followUp = await callAs<Run>(session, 'startRun', { pipelineId: pipeline.id, issue: { title: 'Review on octo/repo#12', key: 'octo/repo#12', url: pullUrl } });
  await waitForRunAs(session, followUp.id, ['succeeded']);
  made.openedId = opened.id;
  made.followUpId = followUp.id;

  await stopServer(session.server);
  const edit = (id: string, change: (run: Run) => void) => {
    const path = join(session.dataDir, 'runs', id, 'run.json');
    const run = JSON.parse(readFileSync(path, 'utf8')) as Run;
    change(run);
    writeFileSync(path, JSON.stringify(run));
  };
  edit(opened.id, (run) => {
    run.steps[1]!.pullRequest = { number: 12, url: pullUrl, repository: 'octo/repo', branch: `factory/${opened.id}`, state: 'merged' };
  });
  edit(followUp.id, (run) => {
    run.followUp = { repository: 'octo/repo', number: 12, url: pullUrl, branch: `factory/${opened.id}`, reviewId: 80 };
    run.issue!.raw = { action: 'submitted', review: { id: 80, state: 'changes_requested', user: { login: 'alice' } } };
  });
  const started = await startServer(session.dataDir, Number(new URL(session.origin).port));
  session.server = started.server;
  session.link = started.link;
  session.token = new URL(started.link).searchParams.get('t') ?? session.token;
  await signIn(session);
}

const pulls = suiteNeeding('pull requests (Chromium)', [chromium]);
const { need } = suiteSession(pulls, seed);

/** Desktop and phone screenshots, light: pull-request-<name>-{desktop,phone}.png. */
async function shootBoth(session: Session, name: string): Promise<void> {
  const { page } = session;
  for (const kind of ['desktop', 'phone'] as const) {
    await page.viewport(kind);
    await page.waitFor(`innerWidth === ${kind === 'phone' ? 390 : 1280}`, 5000, `the ${kind} viewport`);
    await settle(page);
    await page.screenshot(join(screenshots, `pull-request-${name}-${kind}.png`));
  }
  await page.viewport('desktop');
  await settle(page);
}

pulls('the run page shows the pull request its step opened: number, state and a link that opens outside, and its follow-ups', async () => {
  const session = need();
  const { page } = session;
  await show(page, `#/runs/${made.openedId}`);
  await page.waitFor(`document.querySelector('[data-test="pull-request"]')`, 5000, 'the pull request line');
  const line = await page.evaluate<{ text: string; href: string; target: string; state: string }>(`(() => {
    const line = document.querySelector('[data-test="pull-request"]');
    const link = line.querySelector('a.pr-link');
    return { text: line.textContent, href: link.href, target: link.target, state: line.querySelector('[data-test="pr-state"]').textContent };
  })()`);
  assert.match(line.text, /^Pull request #12/);
  assert.is(line.href, pullUrl);
  assert.is(line.target, '_blank', 'a browser opens it in a new tab, as other outside links');
  assert.is(line.state, 'merged');
  const followUps = await page.evaluate<{ text: string; href: string }[]>(`[...document.querySelectorAll('[data-test="follow-ups"] li')].map((item) => ({ text: item.textContent, href: item.querySelector('a').getAttribute('href') }))`);
  assert.equal(followUps.map((item) => item.href), [`#/runs/${made.followUpId}`]);
  assert.match(followUps[0]!.text, /succeeded.*Review on octo\/repo#12.*review by @alice/);
  await shootBoth(session, 'opened');
});

pulls('a follow-up\'s page says what it follows up, linked, with the pull request\'s state', async () => {
  const session = need();
  const { page } = session;
  await show(page, `#/runs/${made.followUpId}`);
  await page.waitFor(`document.querySelector('[data-test="follow-up-of"]')`, 5000, 'the follow-up line');
  const line = await page.evaluate<{ text: string; href: string }>(`(() => {
    const line = document.querySelector('[data-test="follow-up-of"]');
    return { text: line.textContent, href: line.querySelector('a').href };
  })()`);
  assert.is(line.text, 'Follow-up of #12 (review by @alice) merged');
  assert.is(line.href, pullUrl);
  const others = await page.evaluate<number>(`document.querySelectorAll('[data-test="follow-ups"] li').length`);
  assert.is(others, 0, 'the run that opened the pull request is not a follow-up of it');
  await shootBoth(session, 'follow-up');
});

pulls('the Runs list shows the pull request beside the issue', async () => {
  const session = need();
  const { page } = session;
  await show(page, '#/runs');
  await page.waitFor(`document.querySelector('[data-run-id="${made.openedId}"] [data-test="run-pr"]')`, 5000, 'the pull request in the row');
  const chip = await page.evaluate<{ text: string; title: string; inTitle: boolean }>(`(() => {
    const chip = document.querySelector('[data-run-id="${made.openedId}"] [data-test="run-pr"]');
    return { text: chip.textContent, title: chip.title, inTitle: Boolean(chip.closest('.run-row-title')) };
  })()`);
  assert.equal(chip, { text: '#12 · merged', title: 'Pull request octo/repo#12 (merged)', inTitle: true });
  const others = await page.evaluate<number>(`document.querySelectorAll('[data-run-id="${made.followUpId}"] [data-test="run-pr"]').length`);
  assert.is(others, 0, 'a run that opened no pull request shows none');
  const overflow = await page.evaluate<boolean>('document.documentElement.scrollWidth > innerWidth');
  assert.not.ok(overflow);
  await shootBoth(session, 'runs');
});

pulls.run();
