// End to end: the run page at the level of a CI run page, in Chromium at 1280×800 and 390×844,
// light and dark. A waiting approval card always comes first; the log has numbers, times and links
// to a line; the echoed command is the one that ran, secrets masked; a failure is said once, in
// words; a retried run's duration leaves out the idle time before the retry; live lines are lined
// up with a read without repeats; deleting a run says what was kept, a run whose worktree went
// names its branch, and Projects lists and deletes kept run branches. Needs `node build.mjs
// --tests` first; skipped when Chromium is missing (test/helpers/tools.ts).

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { makeTempDir, removeTempDir } from '../helpers/temp';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { answerDialogsYes, clearToasts, settle, shoot, shootPhoneBoth, show, signIn, sleep, startServer, stopServer, suiteSession } from './session';

const runPage = suiteNeeding('run page (Chromium)', [chromium]);
const folders: string[] = [];
runPage.after(() => {
  for (const folder of folders) removeTempDir(folder);
});
const { need, call, waitForRun } = suiteSession(runPage, async (session) => {
  await signIn(session);
  // Confirmations are answered yes, and their questions kept to be read.
  await session.page.evaluate(answerDialogsYes);
});

const demoProject = async () => (await call('snapshot')).projects[0];
const box = (page: Page, selector: string) => page.evaluate<{ top: number; bottom: number; height: number; left: number } | null>(`(() => { const r = document.querySelector(${JSON.stringify(selector)})?.getBoundingClientRect(); return r ? { top: r.top, bottom: r.bottom, height: r.height, left: r.left } : null; })()`);
const text = (page: Page, selector: string) => page.evaluate<string>(`document.querySelector(${JSON.stringify(selector)})?.innerText ?? ''`);
const rowTexts = `[...document.querySelectorAll('[data-test="log"] .log-line')].map((row) => row.textContent)`;

/** Phone screenshots (light and dark) of a screen opened at phone width, without the toasts of the moment. */
async function shootPhoneClear(page: Page, name: string): Promise<void> {
  await page.evaluate(clearToasts);
  await shootPhoneBoth(page, name);
}

/** Opens `hash` as a fresh screen (through Runs), as coming back to it would. */
async function reopen(page: Page, hash: string): Promise<void> {
  await show(page, '#/runs');
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await page.waitFor(`document.querySelector('[data-test="run-status"]')`, 10_000, `the run page ${hash}`);
}

/** Reopens `hash` at phone width, waits for `ready` (a selector) and takes the phone screenshots `name`. */
async function shootReopenedOnPhone(page: Page, hash: string, ready: string, what: string, name: string): Promise<void> {
  await page.viewport('phone');
  await reopen(page, hash);
  await page.waitFor(`document.querySelector(${JSON.stringify(ready)})`, 10_000, what);
  await shootPhoneClear(page, name);
  await page.viewport('desktop');
}

runPage('a waiting approval card comes first, whatever step the pane shows, on a desktop and on a phone', async () => {
  const { page } = need();
  const pipeline = await call('savePipeline', {
    projectId: (await demoProject()).id, name: 'Sofa', variables: {},
    steps: [
      { id: 'prepare', name: 'Prepare', kind: 'shell', command: 'echo "Preparing {{issue.title}}"; seq 1 40' },
      { id: 'choose', name: 'Choose', kind: 'approval', message: 'Ship “{{issue.title}}” now?', choices: { mode: 'single', options: ['Ship it', 'Polish first', 'Drop it'] } },
    ],
  });
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Approve from the sofa' } });
  await waitForRun(run.id, ['waiting']);
  const card = '[data-test="approval"]';
  const cardFirst = async () => {
    const [approval, timeline] = [await box(page, card), await box(page, '.timeline')];
    return Boolean(approval && timeline && approval.height > 0 && approval.bottom <= timeline.top);
  };

  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('${card}')`, 10_000, 'the approval card');
  assert.is(await text(page, '.pane-title'), 'Prepare', 'the pane shows the step that ran before the approval');
  assert.ok(await cardFirst(), 'the card is above the timeline');
  await page.click('[data-test="setup-log"]');
  assert.ok(await cardFirst(), 'the card stays first with another log selected');

  // Coming back through a link to a line of Prepare: the card still comes first.
  await reopen(page, `#/runs/${run.id}?step=prepare&attempt=1#L3`);
  await page.waitFor(`document.querySelector('${card}') && document.querySelector('.log-target')?.dataset.n === '3'`, 10_000, 'the card and line 3 marked');
  assert.ok(await cardFirst(), 'the card is first after navigating back');
  assert.is(await text(page, '.pane-title'), 'Prepare');
  await shoot(page, 'run-page-approval');

  // On a phone: card first, logs wrapped, actions under the title.
  await page.viewport('phone');
  await reopen(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('${card}')`, 10_000, 'the card on a phone');
  await settle(page);
  assert.ok(await cardFirst(), 'the card is above the timeline on a phone');
  assert.ok(await page.evaluate(`document.querySelector('[data-test="wrap"]').checked && document.querySelector('[data-test="log"]').classList.contains('wrap')`), 'logs wrap by default on a phone');
  const [title, actions] = [await box(page, '.run-title'), await box(page, '.run-actions')];
  const lineHeight = await page.evaluate<number>(`parseFloat(getComputedStyle(document.querySelector('.run-title')).lineHeight)`);
  assert.ok(title!.height < lineHeight * 1.5, `the title takes one line (${title!.height} px, line ${lineHeight} px)`);
  assert.ok(actions!.top >= title!.bottom, 'the actions sit under the title');
  await page.evaluate('scrollTo(0, 0)');
  await shootPhoneClear(page, 'run-page-approval');
  // Option id "2" is the second label (options[1]): the decision names it, not its neighbours.
  await page.click('[data-test="choice"][value="2"]');
  await page.click('[data-test="approve"]');
  await page.waitFor(`document.querySelector('[data-test="run-status"]')?.textContent.includes('succeeded')`, 15_000, 'the run succeeded');
  assert.not.ok(await page.evaluate(`document.querySelector('${card}')`), 'no card once decided');
  assert.equal((await call('getRun', run.id)).steps.find((step: { id: string }) => step.id === 'choose').approval.selected, ['2']);
  await page.click('.timeline button[data-step-id="choose"]');
  const chose = await page.waitFor<string>(`[...document.querySelectorAll('.run-decision p')].find((line) => line.textContent.startsWith('Chose: '))?.textContent`, 5000, 'the decision in the pane');
  assert.is(chose, 'Chose: Polish first');
  await page.viewport('desktop');
  await settle(page);
});

runPage('the log has numbers, times and links to a line; the command as run; a failure said once, in words; no empty boxes', async () => {
  const e = need();
  const { page } = e;
  const pipeline = await call('savePipeline', {
    projectId: (await demoProject()).id, name: 'Build', variables: { token: e.token },
    steps: [
      { id: 'build', name: 'Build', kind: 'shell', command: 'echo "Building {{issue.title}} with {{vars.token}}"; seq 1 300; echo "a long line: $(seq -s " " 1 60)"' },
      { id: 'review', name: 'Review', kind: 'agent', prompt: 'Review {{issue.title}}', harnessId: 'claude' },
      { id: 'ship', name: 'Ship', kind: 'shell', command: 'echo shipped' },
    ],
  });
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Log page' } });
  await waitForRun(run.id, ['failed']);
  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('[data-test="run-error"]:not([hidden])')`, 10_000, 'the run error');

  // The failure, once, in words, with what to do.
  const error = await text(page, '[data-test="run-error"]');
  assert.match(error, /^Claude Code is not installed: install it.* or pick another harness in the pipeline\. Harnesses$/, error);
  assert.not.match(error, /`/, 'no code marks');
  assert.is(await page.evaluate(`document.querySelector('[data-test="run-error"] a').getAttribute('href')`), '#/harnesses');
  assert.is(await text(page, '.pane-title'), 'Review', 'the failed step is shown');
  assert.is(await page.evaluate(`document.querySelectorAll('.pane-note-error').length`), 0, 'the pane does not repeat the error');
  assert.is((await page.evaluate<string>(`document.querySelector('#main').innerText`)).split('Claude Code is not installed').length - 1, 1, 'the error is on the page once');
  // No output: a sentence, no empty box and no log tools.
  await page.waitFor(`document.querySelector('.log-empty')?.textContent === 'This step printed nothing.'`, 5000, 'the empty log said');
  assert.is(await page.evaluate(`getComputedStyle(document.querySelector('[data-test="log"]')).borderTopWidth`), '0px', 'no box around it');
  assert.is(await page.evaluate(`getComputedStyle(document.querySelector('.log-toolbar')).display`), 'none', 'no log tools');
  await page.evaluate(clearToasts);
  const header = await text(page, '.run-meta');
  assert.match(header, /Started (just now|\d+ s ago)/);
  assert.match(header, /Duration \d/);
  await shoot(page, 'run-page-failed');
  await page.click('[data-test="step"][data-step-id="ship"]');
  await page.waitFor(`document.querySelector('.log-empty')?.textContent === 'This step was skipped.'`, 5000, 'the skipped step said');

  // The command as it ran: the placeholders filled, the remote token (a secret) masked.
  await page.click('[data-test="step"][data-step-id="build"]');
  await page.waitFor(`document.querySelectorAll('[data-test="log"] .log-line').length > 300`, 10_000, 'the build log');
  const lines = await page.evaluate<string[]>(rowTexts);
  assert.is(lines[0], '$ echo "Building Log page with ***"; seq 1 300; echo "a long line: $(seq -s " " 1 60)"');
  assert.not.ok(lines.some((line) => line.includes(e.token)), 'the token is in no line');
  assert.is(await page.evaluate(`getComputedStyle(document.querySelector('.log-line[data-n="2"]'), '::before').content`), '"2"', 'each line shows its number');
  await page.click('[data-test="times"]');
  assert.match(await page.evaluate<string>(`getComputedStyle(document.querySelector('.log-line[data-n="2"]'), '::before').content`), /^"2 {2}\d\d:\d\d:\d\d"$/, 'and its time');

  // A click on a line's number links to it; the link opens the log there.
  const hash = await page.evaluate<string>(`(() => {
    const row = document.querySelector('.log-line[data-n="120"]');
    row.scrollIntoView({ block: 'center' });
    const r = row.getBoundingClientRect();
    row.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: r.left + 3, clientY: r.top + 3 }));
    return location.hash;
  })()`);
  assert.is(hash, `#/runs/${run.id}?step=build&attempt=1#L120`);
  assert.is(await page.evaluate(`document.querySelector('.log-target')?.dataset.n`), '120');
  await reopen(page, hash);
  await page.waitFor(`document.querySelector('.log-target')?.dataset.n === '120'`, 10_000, 'line 120 marked after opening the link');
  await settle(page);
  assert.ok(await page.evaluate(`(() => { const log = document.querySelector('[data-test="log"]').getBoundingClientRect(); const row = document.querySelector('.log-target').getBoundingClientRect(); return row.top >= log.top && row.bottom <= log.bottom; })()`), 'the linked line is in view');
  assert.not.ok(await page.evaluate(`document.querySelector('[data-test="follow"]').checked`), 'following stops at a linked line');
  await shoot(page, 'run-page-line-link');
  await page.click('[data-test="times"]');

  await page.viewport('phone');
  await reopen(page, `#/runs/${run.id}?step=build&attempt=1#L120`);
  await page.waitFor(`document.querySelector('.log-target')?.dataset.n === '120'`, 10_000, 'line 120 on a phone');
  await page.evaluate('scrollTo(0, 0)');
  await shootPhoneClear(page, 'run-page-failed');
  await page.evaluate(`document.querySelector('.run-pane').scrollIntoView({ block: 'start' })`);
  await shootPhoneClear(page, 'run-page-log');
  // The end, where a long line wraps clear of the numbers.
  await page.evaluate(`(() => { const log = document.querySelector('[data-test="log"]'); log.scrollIntoView({ block: 'start' }); log.scrollTop = log.scrollHeight; })()`);
  await shootPhoneClear(page, 'run-page-log-end');
  await page.viewport('desktop');
  await settle(page);
});

runPage('a retried run counts its steps\' time, not the idle time before the retry; durations and relative times tick', async () => {
  const { page } = need();
  const pipeline = await call('savePipeline', {
    projectId: (await demoProject()).id, name: 'Flaky', variables: {},
    steps: [{ id: 'wait', name: 'Wait', kind: 'shell', command: 'sleep 1' }, { id: 'check', name: 'Check', kind: 'shell', command: 'echo checking; exit 3' }],
  });
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Flaky check' } });
  await waitForRun(run.id, ['failed']);
  await sleep(2500); // the idle time before the retry, which the duration must not count
  await call('retryRun', run.id, 'check');
  // retryRun queues the run before it answers, so the next `failed` is the retry's.
  const retried = await waitForRun(run.id, ['failed']);
  assert.is(retried.steps[1].attempt, 2, 'the retry ran the step again');
  const span = retried.finishedAt - retried.startedAt;
  const steps = retried.steps.reduce((sum: number, step: any) => sum + (step.finishedAt - step.startedAt), 0);
  await show(page, `#/runs/${run.id}`);
  const shown = await page.waitFor<string>(`document.querySelector('[data-test="run-duration"]')?.textContent`, 10_000, 'the duration');
  const seconds = Number(/Duration ([\d.]+) s/.exec(shown)?.[1]);
  console.log(`  retried run: ${span} ms from start to finish, its steps ${steps} ms; the header says "${shown}"`);
  assert.ok(span - steps >= 2500, `the run spans ${span} ms, its steps ${steps} ms: the idle time is there to leave out`);
  assert.ok(Math.abs(seconds * 1000 - steps) <= 100, `"${shown}" counts the steps (${steps} ms), not the ${span} ms span`);
  const error = await text(page, '[data-test="run-error"]');
  assert.is(error, '“Check” failed: exited with code 3. Its log shows why; Retry runs it again. Show its log');
  assert.is(await page.evaluate(`document.querySelectorAll('.pane-note-error').length`), 0, 'said once');
  await shoot(page, 'run-page-retried');
  await shootReopenedOnPhone(page, `#/runs/${run.id}`, '[data-test="run-error"]:not([hidden])', 'the error on a phone', 'run-page-retried');

  // A running step's duration and the header's times tick each second.
  const slow = await call('savePipeline', { projectId: (await demoProject()).id, name: 'Slow', variables: {}, steps: [{ id: 'slow', name: 'Slow', kind: 'shell', command: 'sleep 4' }] });
  const running = await call('startRun', { pipelineId: slow.id, issue: { title: 'Slow' } });
  await show(page, `#/runs/${running.id}`);
  const live = `document.querySelector('[data-test="run-duration"] .live-duration')?.textContent`;
  const first = await page.waitFor<string>(live, 10_000, 'a live duration');
  await page.waitFor(`${live} !== ${JSON.stringify(first)}`, 2500, 'the duration ticking');
  await page.evaluate(`document.querySelector('.run-meta time').dataset.at = String(Date.now() - 3600_000)`);
  await page.waitFor(`document.querySelector('.run-meta time').textContent === '1 h ago'`, 2500, 'the start time ticking');
  await waitForRun(running.id, ['succeeded']);
});

runPage('live lines are lined up with a read: every line once, in order, for a step (by number) and the setup log (by text)', async () => {
  const { page } = need();
  const folder = makeTempDir('factory-e2e-trickle');
  folders.push(folder);
  const project = await call('saveProject', { name: 'Trickle', path: folder, worktrees: false, setupCommand: 'for i in $(seq 1 40); do echo s$i; sleep 0.03; done' });
  const pipeline = await call('savePipeline', { projectId: project.id, name: 'Trickle', variables: {}, steps: [{ id: 'trickle', name: 'Trickle', kind: 'shell', command: 'for i in $(seq 1 80); do echo n$i; sleep 0.02; done' }] });
  const expect = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}${index + 1}`);

  // The setup log, opened while it is written: its lines carry no numbers.
  const first = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Setup trickle' } });
  await show(page, `#/runs/${first.id}`);
  await page.waitFor(`Boolean(document.querySelector('[data-test="setup-log"]'))`, 10_000, 'the setup log in the timeline');
  await page.click('[data-test="setup-log"]');
  await waitForRun(first.id, ['succeeded']);
  await page.waitFor(`(${rowTexts}).filter((line) => /^s\\d+$/.test(line)).length >= 40`, 5000, 'the setup log\'s 40 lines');
  assert.equal((await page.evaluate<string[]>(rowTexts)).filter((line) => /^s\d+$/.test(line)), expect('s', 40), 'the setup lines once each, in order');

  // A step's log, opened while it is written: lines are numbered, none repeated or missing.
  const second = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Step trickle' } });
  await show(page, `#/runs/${second.id}`);
  await page.waitFor(`document.querySelector('.pane-title')?.textContent === 'Trickle'`, 10_000, 'the step selected as it starts');
  await waitForRun(second.id, ['succeeded']);
  // The last logs event follows the run's status by up to a pacing interval, and a frame.
  const stepLines = async () => (await page.evaluate<string[]>(rowTexts)).filter((line) => /^n\d+$/.test(line));
  await page.waitFor(`(${rowTexts}).filter((line) => /^n\\d+$/.test(line)).length >= 80`, 5000, 'the step\'s 80 lines').catch(async (error: Error) => {
    const state = await page.evaluate(`({ follow: document.querySelector('[data-test="follow"]')?.checked, rows: document.querySelectorAll('[data-test="log"] .log-line').length, text: [...document.querySelectorAll('[data-test="log"] .log-line')].slice(-3).map((row) => row.textContent) })`);
    throw new Error(`${error.message}: ${JSON.stringify(state)}`);
  });
  assert.equal(await stepLines(), expect('n', 80), 'the step lines once each, in order');
  const numbers = await page.evaluate<number[]>(`[...document.querySelectorAll('[data-test="log"] .log-line')].map((row) => Number(row.dataset.n))`);
  assert.ok(numbers.every((n, index) => n === index + 1), `the rows are numbered 1, 2, 3, …: ${numbers.join(',')}`);
});

runPage('work is kept: deleting a run says what was kept, a run without its worktree names its branch, Projects lists and deletes kept branches', async () => {
  const e = need();
  const { page } = e;
  const repository = makeTempDir('factory-e2e-repo');
  folders.push(repository);
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: repository, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repository, 'README'), 'hello\n');
  git('add', 'README');
  git('commit', '-qm', 'first');
  git('branch', 'factory/run_0000000000000000merged');
  const project = await call('saveProject', { name: 'Repo', path: repository, worktrees: true });
  const commit = 'for i in $(seq 1 {{vars.count}}); do echo $i > f$i; git add f$i; git -c user.name=F -c user.email=f@example.com commit -qm "change $i of $FACTORY_RUN_ID"; done; echo committed';
  const pipeline = await call('savePipeline', { projectId: project.id, name: 'Commit', variables: { count: '3' }, steps: [{ id: 'commit', name: 'Commit', kind: 'shell', command: commit }] });
  const deleted = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Three commits' } });
  const aged = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Old run' }, variables: { count: '1' } });
  await waitForRun(deleted.id, ['succeeded']);
  await waitForRun(aged.id, ['succeeded']);

  // Deleting a run: the toast says what was kept.
  await show(page, `#/runs/${deleted.id}`);
  await page.waitFor(`document.querySelector('[data-test="delete"]')`, 10_000, 'the Delete button');
  await page.click('[data-test="delete"]');
  const toast = await page.waitFor<string>(`[...document.querySelectorAll('.toast')].map((toast) => toast.textContent).find((text) => text.startsWith('Run deleted'))`, 15_000, 'the delete toast');
  assert.is(toast, `Run deleted: kept branch factory/${deleted.id} (3 commits not merged anywhere)`);
  await shoot(page, 'run-page-deleted', ['light']);

  // A run finished eight days ago loses its worktree when the server starts (retention: 7 days by
  // default): written so on disk while the server is stopped.
  await stopServer(e.server);
  const file = join(e.dataDir, 'runs', aged.id, 'run.json');
  const stored = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, JSON.stringify({ ...stored, finishedAt: Date.now() - 8 * 24 * 3600_000 }));
  const port = Number(new URL(e.origin).port);
  const restarted = await startServer(e.dataDir, port);
  e.server = restarted.server;
  e.link = restarted.link;
  e.token = new URL(restarted.link).searchParams.get('t') ?? '';
  const deadline = Date.now() + 15_000;
  while (!(await call('getRun', aged.id)).branch) {
    if (Date.now() > deadline) throw new Error('the old run kept no branch within 15 s');
    await sleep(100);
  }
  await signIn(e);
  await page.evaluate(answerDialogsYes);
  await show(page, `#/runs/${aged.id}`);
  const branchNote = await page.waitFor<string>(`document.querySelector('[data-test="run-branch"]')?.textContent`, 10_000, 'the branch in the header');
  assert.is(branchNote, `Its worktree was removed; its work is on branch factory/${aged.id}: a retry makes the worktree again from it.`);
  await page.waitFor(`${rowTexts}.includes('committed')`, 10_000, 'its log, still there');
  await shoot(page, 'run-page-kept-branch');
  await shootReopenedOnPhone(page, `#/runs/${aged.id}`, '[data-test="run-branch"]', 'the branch on a phone', 'run-page-kept-branch');

  // Projects: the kept branches, with what deleting each loses.
  await show(page, '#/projects');
  const list = '[data-test="run-branches"]';
  await page.waitFor(`document.querySelectorAll('${list} li').length === 3`, 10_000, 'three kept branches');
  const rows = await page.evaluate<string[]>(`[...document.querySelectorAll('${list} li')].map((row) => row.innerText.replace(/\\s+/g, ' '))`);
  const row = (id: string) => rows.find((candidate) => candidate.includes(id)) ?? '';
  assert.match(row(deleted.id), /run deleted · 3 commits on no other branch · last commit .* · not pushed ?Delete$/);
  assert.match(row(aged.id), /Old run · 1 commit on no other branch/);
  assert.match(row('run_0000000000000000merged'), /run deleted · merged/);
  assert.not.ok(await page.evaluate(`[...document.querySelectorAll('.project-row button')].some((button) => button.textContent === 'Open folder')`), 'no Open folder in a browser');
  await page.evaluate(`document.querySelector('${list}').scrollIntoView({ block: 'center' })`);
  await shoot(page, 'run-page-branches');
  await page.viewport('phone');
  await show(page, '#/runs');
  await show(page, '#/projects');
  await page.waitFor(`document.querySelectorAll('${list} li').length === 3`, 10_000, 'the branches on a phone');
  await shootPhoneClear(page, 'run-page-branches');
  await page.viewport('desktop');

  await page.evaluate(`document.querySelector('${list} li[data-branch="factory/${deleted.id}"] button').click()`);
  await page.waitFor(`document.querySelectorAll('${list} li').length === 2`, 10_000, 'the branch deleted');
  assert.is(await page.evaluate(`window.__confirms.at(-1)`), `Delete the branch factory/${deleted.id}? 3 commits found on no other branch will be lost.`);
  await page.evaluate(`[...document.querySelectorAll('${list} button')].find((button) => button.textContent.startsWith('Delete merged branches')).click()`);
  await page.waitFor(`document.querySelectorAll('${list} li').length === 1`, 10_000, 'the merged branch deleted');
  assert.match(await page.evaluate<string>(`window.__confirms.at(-1)`), /^Delete 1 run branch whose commits are all on other branches\? Nothing is lost\.$/);
  assert.equal(git('branch', '--list', 'factory/*').trim().split('\n').map((name) => name.trim()), [`factory/${aged.id}`]);
});

runPage('the page threw no exceptions', () => {
  const { page } = need();
  const exceptions = page.problems.errors.filter((error) => error.source === 'exception' || error.source === 'console');
  assert.equal(exceptions.map((error) => error.text), []);
});

runPage.run();
