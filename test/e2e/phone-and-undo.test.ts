// End to end (issue 28 points 4, 5, 8, 10, 11), in Chromium at 1280×800 and 390×844, light and dark:
// the sign-in link lands a phone on what waits and approving takes at most two taps (counted);
// Cancel sits away from Approve and asks before ending a waiting or running run, and a queued run's
// cancel is undone; deleting a pipeline or a trigger and clearing the Inbox undo within seconds (the
// engine is asked only when the toast ends, and Clear keeps what arrived meanwhile); Runs pins the
// waiting runs, fits a long duration, and a filter from the address does not stick; a Jira poll
// error says where it could not reach in words with the URL behind a disclosure, and no screen is
// ever wider than the viewport. Screenshots under test-output/screenshots/phone-*.png.
// Needs the app built (`node build.mjs --tests`, or FACTORY_E2E_DIST) and chromium on PATH.

import * as assert from 'uvu/assert';
import { FakeJira } from '../fakes/jira';
import { send } from '../helpers/net';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { clearToasts, settle, shootSizes, show, suiteSession } from './session';

const phone = suiteNeeding('phone and undo (Chromium)', [chromium]);
// Not signed in at the start: the first test signs in with the link, as a phone would.
const { need, call, waitForRun } = suiteSession(phone);

const made: { demoId?: string; approvedRunId?: string; jiraTriggerId?: string } = {};
/** What the report quotes: taps from the link to a decision, the widest page at 390 px. */
const measured: { taps?: number; widest?: { hash: string; width: number } } = {};

/** shootSizes under phone-<name>-{light,dark,phone-light,phone-dark}.png. */
const shootAll = (page: Page, name: string, prepare?: string): Promise<void> => shootSizes(page, `phone-${name}`, prepare);

/**
 * One tap: a real pointer press and release at the middle of the element, which must already be
 * in view (a tap cannot reach what is off screen). Returns 1, to be counted.
 */
async function tap(page: Page, selector: string): Promise<number> {
  const box = await page.evaluate<{ x: number; y: number; inView: boolean } | null>(`(() => {
    const element = document.querySelector(${JSON.stringify(selector)});
    if (!element) return null;
    const rect = element.getBoundingClientRect();
    return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2, inView: rect.top >= 0 && rect.bottom <= innerHeight && rect.left >= 0 && rect.right <= innerWidth };
  })()`);
  if (!box) throw new Error(`Nothing to tap: no element matches ${selector}`);
  if (!box.inView) throw new Error(`${selector} is not in view without scrolling`);
  for (const type of ['mousePressed', 'mouseReleased']) await page.send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
  return 1;
}

/** Counts the page's calls of `method` in window.__calls[method] (a call held back must never go out). */
const countCalls = (method: string) => `(() => {
  window.__calls ??= {};
  window.__calls[${JSON.stringify(method)}] = 0;
  if (window.__countingFetch) return;
  window.__countingFetch = true;
  const original = window.fetch;
  window.fetch = (input, init) => {
    const name = /\\/api\\/call\\/(\\w+)/.exec(String(input))?.[1];
    if (name && name in window.__calls) window.__calls[name] += 1;
    return original(input, init);
  };
})()`;
const callsOf = (page: Page, method: string) => page.evaluate<number>(`window.__calls[${JSON.stringify(method)}]`);

async function startWaiting(title: string): Promise<string> {
  const run = await call('startRun', { pipelineId: made.demoId, issue: { title } });
  await waitForRun(run.id, ['waiting']);
  return run.id;
}

/**
 * How wide the page is laid out, and the elements that stick out past `viewport` px. (A phone's
 * layout viewport grows to fit wide content, so innerWidth alone would always agree.)
 */
function pageWidth(page: Page, viewport: number): Promise<{ width: number; sticking: string[] }> {
  return page.evaluate(`({
    width: Math.max(document.documentElement.scrollWidth, innerWidth),
    sticking: [...document.querySelectorAll('body *')].filter((element) => element.getBoundingClientRect().right > ${viewport} + 0.5 && getComputedStyle(element).position !== 'fixed')
      .filter((element, index, all) => !all.includes(element.parentElement))
      .slice(0, 8).map((element) => element.tagName.toLowerCase() + (element.className ? '.' + String(element.className).trim().replace(/\\s+/g, '.') : '') + ' (' + Math.round(element.getBoundingClientRect().right) + ' px): ' + (element.textContent ?? '').trim().slice(0, 40)),
  })`);
}

const undoToast = `[...document.querySelectorAll('.toast')].find((toast) => toast.querySelector('.toast-action'))`;

phone('Chromium is installed and the server and browser start', () => {
  need();
});

phone('the sign-in link lands a phone on the one waiting approval; choosing and approving take 2 taps', async () => {
  const { page, link } = need();
  made.demoId = (await call('snapshot')).pipelines.find((pipeline: { name: string }) => pipeline.name === 'Demo').id;
  const runId = await startWaiting('Ship the login page');
  made.approvedRunId = runId;
  await page.viewport('phone');
  await page.goto(link);
  await page.waitFor(`location.hash === ${JSON.stringify(`#/runs/${runId}`)} && document.querySelector('[data-test="approve"]')`, 10_000, 'the run\'s approval card, straight from the link');
  await settle(page);
  assert.equal(await pageWidth(page, 390), { width: 390, sticking: [] }, 'the run page fits the phone');
  // The card comes first; the run's actions are far below Approve and Reject.
  const layout = await page.evaluate<{ approveBottom: number; cancelTop: number; height: number }>(`({
    approveBottom: document.querySelector('[data-test="approve"]').getBoundingClientRect().bottom,
    cancelTop: document.querySelector('[data-test="cancel"]').getBoundingClientRect().top,
    height: innerHeight,
  })`);
  assert.ok(layout.approveBottom <= layout.height, `Approve is in view without scrolling (bottom ${layout.approveBottom} of ${layout.height})`);
  assert.ok(layout.cancelTop - layout.approveBottom >= 200, `Cancel is far from Approve (${layout.cancelTop - layout.approveBottom} px below it)`);
  assert.ok(layout.cancelTop > layout.height, 'Cancel is not even on the first screen');
  await shootAll(page, 'approval', `window.scrollTo(0, 0)`);
  await page.viewport('phone');
  await page.waitFor(`innerWidth === 390`, 5000, 'the phone viewport');
  await page.evaluate(`window.scrollTo(0, 0)`);
  await settle(page);

  let taps = 0;
  taps += await tap(page, '[data-test="choice"]');
  taps += await tap(page, '[data-test="approve"]');
  const run = await waitForRun(runId, ['running', 'succeeded']);
  assert.ok(run.steps.find((step: { id: string }) => step.id === 'choose').approval.approved, 'approved');
  measured.taps = taps;
  assert.ok(taps <= 2, `${taps} taps from the link to the decision`);
  console.log(`    taps from the sign-in link to an approval on a phone: ${taps}`);
});

phone('one tap on Cancel never ends a waiting run: it asks, and Keep it waiting keeps it; a running run asks too', async () => {
  const { page } = need();
  const runId = await startWaiting('Rotate the certificates');
  await page.viewport('phone');
  await show(page, `#/runs/${runId}`);
  await page.waitFor(`document.querySelector('[data-test="approve"]') && document.querySelector('[data-test="cancel"]')`, 10_000, 'the card and Cancel');
  await page.click('[data-test="cancel"]');
  await page.waitFor(`document.querySelector('dialog.dialog[open]')`, 5000, 'the question');
  assert.match(await page.evaluate<string>(`document.querySelector('dialog.dialog').innerText`), /Cancel the run “Rotate the certificates”\?[\s\S]*waiting for a decision[\s\S]*cannot be undone/);
  assert.is(await page.evaluate(`document.querySelector('[data-test="dialog-cancel"]').textContent`), 'Keep it waiting');
  assert.is((await call('getRun', runId)).status, 'waiting', 'one tap ended nothing');
  await shootAll(page, 'cancel-waiting');
  await page.click('[data-test="dialog-cancel"]');
  assert.not.ok(await page.evaluate(`document.querySelector('dialog.dialog')`), 'the question is gone');
  assert.is((await call('getRun', runId)).status, 'waiting', 'Keep it waiting keeps it');

  await page.click('[data-test="cancel"]');
  await page.waitFor(`document.querySelector('dialog.dialog[open]')`, 5000, 'the question again');
  await page.click('[data-test="dialog-confirm"]');
  await waitForRun(runId, ['cancelled']);
  await page.viewport('desktop');
});

phone('a queued run\'s Cancel is undone from its toast (nothing reaches the engine); without Undo it is cancelled', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  const slow = await call('savePipeline', { projectId: project.id, name: 'One at a time', variables: {}, maxParallelRuns: 1, steps: [{ id: 'wait', name: 'Wait', kind: 'shell', command: 'sleep 60' }] });
  const first = await call('startRun', { pipelineId: slow.id, issue: { title: 'Holds the only slot' } });
  await waitForRun(first.id, ['running']);
  const queued = await call('startRun', { pipelineId: slow.id, issue: { title: 'Waits its turn' } });
  assert.is((await call('getRun', queued.id)).status, 'queued');
  await show(page, `#/runs/${queued.id}`);
  await page.waitFor(`document.querySelector('[data-test="cancel"]')`, 10_000, 'Cancel');
  await page.evaluate(countCalls('cancelRun'));
  await page.evaluate(clearToasts);
  await page.click('[data-test="cancel"]');
  await page.waitFor(undoToast, 5000, 'the Undo toast');
  assert.not.ok(await page.evaluate(`document.querySelector('dialog.dialog')`), 'no question for a queued run');
  assert.match(await page.evaluate<string>(`${undoToast}.textContent`), /Cancelled “Waits its turn”Undo/);
  await shootAll(page, 'cancel-queued-undo');
  await page.evaluate(`${undoToast}.querySelector('.toast-action').click()`);
  await page.waitFor(`!document.querySelector('[data-test="cancel"]').disabled`, 5000, 'Cancel ready again');
  assert.is(await callsOf(page, 'cancelRun'), 0, 'Undo: the engine was never asked');
  assert.is((await call('getRun', queued.id)).status, 'queued', 'still queued');

  await page.click('[data-test="cancel"]');
  await waitForRun(queued.id, ['cancelled'], 15_000);
  assert.is(await callsOf(page, 'cancelRun'), 1, 'asked once, when the toast ended');

  // The running one asks first.
  await show(page, `#/runs/${first.id}`);
  await page.waitFor(`document.querySelector('[data-test="cancel"]')`, 10_000, 'Cancel');
  await page.click('[data-test="cancel"]');
  await page.waitFor(`document.querySelector('dialog.dialog[open]')`, 5000, 'the question');
  assert.match(await page.evaluate<string>(`document.querySelector('dialog.dialog').innerText`), /Its running step is stopped\. This cannot be undone/);
  await page.click('[data-test="dialog-confirm"]');
  await waitForRun(first.id, ['cancelled']);
  await call('deletePipeline', slow.id);
});

phone('Runs: the sign-in link with several waiting lands on them, pinned above newer runs; the filter stays in the address; a long duration fits', async () => {
  const { page, origin, token } = need();
  const [first, second] = [await startWaiting('Review the pricing page'), await startWaiting('Fix the flaky login test')];
  const project = (await call('snapshot')).projects[0];
  const quick = await call('savePipeline', { projectId: project.id, name: 'Quick', variables: {}, steps: [{ id: 'hello', name: 'Hello', kind: 'shell', command: 'echo hello' }] });
  const newest = await call('startRun', { pipelineId: quick.id, issue: { title: 'The newest run, finished' } });
  await waitForRun(newest.id, ['succeeded']);
  const invite = (await send(`${origin}/api/pairing-invite`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } })).json().url;

  await page.viewport('phone');
  await page.goto(invite);
  await page.waitFor(`location.hash === '#/runs?status=waiting' && document.querySelectorAll('[data-test="run-row"]').length === 2`, 10_000, 'Runs filtered to the two waiting runs');
  assert.is(await page.evaluate(`document.querySelector('[data-test="filter-status"]').value`), 'waiting');
  const shownIds = await page.evaluate<string[]>(`[...document.querySelectorAll('[data-test="run-row"]')].map((row) => row.dataset.runId)`);
  assert.equal(shownIds.sort(), [first, second].sort());

  // All statuses: the waiting runs stay on top, above the newer finished run; the address says "all".
  await page.evaluate(`(() => { const select = document.querySelector('[data-test="filter-status"]'); select.value = ''; select.dispatchEvent(new Event('change')); })()`);
  await page.waitFor(`document.querySelectorAll('[data-test="run-row"]').length > 2`, 5000, 'every run');
  assert.is(await page.evaluate('location.hash'), '#/runs', 'the status lives in the address');
  const order = await page.evaluate<{ id: string; pinned: boolean }[]>(`[...document.querySelectorAll('.run-list > li')].map((item) => ({ id: item.querySelector('[data-test="run-row"]').dataset.runId, pinned: item.classList.contains('run-item-pinned') }))`);
  assert.equal(order.slice(0, 2).map((row) => row.pinned), [true, true], 'the two waiting runs first');
  assert.equal(order.slice(0, 2).map((row) => row.id).sort(), [first, second].sort());
  assert.is(order[2]!.id, newest.id, 'then the newest');
  assert.not.ok(order[2]!.pinned);

  // The top bar's count filters this visit only: Runs from the menu shows every run again.
  await page.evaluate(`document.querySelector('.top-waiting').click()`);
  await page.waitFor(`document.querySelector('[data-test="filter-status"]').value === 'waiting'`, 5000, 'the waiting filter from the badge');
  await show(page, '#/inbox');
  await show(page, '#/runs');
  assert.is(await page.evaluate(`document.querySelector('[data-test="filter-status"]').value`), '', 'the filter did not stick');

  // A duration as long as the list shows them ("59 min 59 s") is not cut at 1280 px.
  await page.viewport('desktop');
  await page.waitFor(`innerWidth === 1280`, 5000, 'the desktop viewport');
  await settle(page);
  const cut = await page.evaluate<string[]>(`[...document.querySelectorAll('.run-row-duration')].filter((cell) => {
    cell.textContent = '59 min 59 s';
    return cell.scrollWidth > cell.clientWidth;
  }).map((cell) => cell.closest('[data-test="run-row"]').dataset.runId)`);
  assert.equal(cut, [], 'no duration cut off');
  await page.evaluate(clearToasts);
  await shootAll(page, 'runs-pinned');
  await call('cancelRun', first);
  await call('cancelRun', second);
});

phone('deleting a pipeline or a trigger is undone from its toast; without Undo the engine deletes it when the toast ends', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  const pipeline = await call('savePipeline', { projectId: project.id, name: 'Short-lived', variables: {}, steps: [{ id: 'hello', name: 'Hello', kind: 'shell', command: 'echo hello' }] });
  const row = `[data-test="pipeline-row"][data-id="${pipeline.id}"]`;
  await show(page, '#/pipelines');
  await page.waitFor(`document.querySelector('${row}')`, 5000, 'the pipeline');
  await page.evaluate(countCalls('deletePipeline'));
  await page.evaluate(clearToasts);
  await page.click(`${row} [data-action="delete"]`);
  await page.waitFor(`!document.querySelector('${row}') && ${undoToast}`, 5000, 'the row gone and the Undo toast');
  assert.not.ok(await page.evaluate(`document.querySelector('dialog.dialog')`), 'no question: it can be undone');
  await shootAll(page, 'pipeline-undo');
  await page.evaluate(`${undoToast}.querySelector('.toast-action').click()`);
  await page.waitFor(`document.querySelector('${row}')`, 5000, 'the pipeline back after Undo');
  assert.is(await callsOf(page, 'deletePipeline'), 0, 'the engine was never asked');
  await page.click(`${row} [data-action="delete"]`);
  const deadline = Date.now() + 15_000;
  while ((await call('snapshot')).pipelines.some((candidate: { id: string }) => candidate.id === pipeline.id)) {
    if (Date.now() > deadline) throw new Error('the pipeline was not deleted after its toast');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.is(await callsOf(page, 'deletePipeline'), 1);
  assert.not.ok(await page.evaluate(`document.querySelector('${row}')`), 'and it stays gone');

  const trigger = await call('saveTrigger', { name: 'Storefront hook', kind: 'webhook', enabled: true, pipelineId: made.demoId });
  await show(page, '#/triggers');
  const item = `.trigger-list [data-id="${trigger.id}"]`;
  await page.waitFor(`document.querySelector('${item}')`, 5000, 'the trigger');
  await page.click(item);
  const deleteButton = `[...document.querySelectorAll('.triggers-page form.editor button')].find((button) => button.textContent === 'Delete')`;
  await page.waitFor(deleteButton, 5000, 'its Delete');
  await page.evaluate(countCalls('deleteTrigger'));
  await page.evaluate(clearToasts);
  await page.evaluate(`${deleteButton}.click()`);
  await page.waitFor(`!document.querySelector('${item}') && ${undoToast}`, 5000, 'the trigger gone and the Undo toast');
  await page.evaluate(`${undoToast}.querySelector('.toast-action').click()`);
  await page.waitFor(`document.querySelector('${item}')`, 5000, 'the trigger back after Undo');
  assert.is(await callsOf(page, 'deleteTrigger'), 0, 'the engine was never asked');
  assert.ok((await call('snapshot')).triggers.some((candidate: { id: string }) => candidate.id === trigger.id));
});

phone('Clear empties the Inbox with Undo; when the toast ends only what was shown goes, not an item that came meanwhile', async () => {
  const { page } = need();
  await show(page, '#/inbox');
  const shown = await page.waitFor<number>(`document.querySelectorAll('.inbox-item').length`, 5000, 'items in the Inbox');
  await page.evaluate(countCalls('clearInbox'));
  await page.evaluate(clearToasts);
  const clear = `[...document.querySelectorAll('.inbox-page button')].find((button) => button.textContent === 'Clear')`;
  await page.evaluate(`${clear}.click()`);
  await page.waitFor(`document.querySelectorAll('.inbox-item').length === 0 && ${undoToast}`, 5000, 'the Inbox empty and the Undo toast');
  assert.not.ok(await page.evaluate(`document.querySelector('dialog.dialog')`), 'no question: it can be undone');
  await shootAll(page, 'inbox-clear-undo');
  await page.evaluate(`${undoToast}.querySelector('.toast-action').click()`);
  await page.waitFor(`document.querySelectorAll('.inbox-item').length === ${shown}`, 5000, 'the items back after Undo');
  assert.is(await callsOf(page, 'clearInbox'), 0, 'the engine was never asked');

  await page.evaluate(`${clear}.click()`);
  await page.waitFor(`document.querySelectorAll('.inbox-item').length === 0`, 5000, 'the Inbox empty again');
  // An item arrives while the toast shows: it is not among what the person cleared.
  const quick = (await call('snapshot')).pipelines.find((pipeline: { name: string }) => pipeline.name === 'Quick');
  const late = await call('startRun', { pipelineId: quick.id, issue: { title: 'Finished during the Undo time' } });
  await waitForRun(late.id, ['succeeded']);
  await page.waitFor(`[...document.querySelectorAll('.inbox-item')].some((item) => item.textContent.includes('Finished during the Undo time'))`, 5000, 'the new item shown');
  assert.ok(await page.evaluate(undoToast), 'still within the Undo time');
  const deadline = Date.now() + 15_000;
  while ((await call('snapshot')).inbox.length !== 1) {
    if (Date.now() > deadline) throw new Error('the Inbox was not cleared after its toast');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.match((await call('snapshot')).inbox[0].title, /Finished during the Undo time/, 'the late item stays');
  assert.is(await callsOf(page, 'clearInbox'), 1);
});

phone('a Jira poll error says where in words, the 400-character URL behind Details; no screen is wider than the viewport', async () => {
  const { page } = need();
  const fake = await FakeJira.start({ mode: 'cloud' });
  let port: string;
  const jiraToken = fake.token;
  try {
    const account = await call('saveConnection', { kind: 'jira', name: 'Acme Jira', baseUrl: fake.url, email: fake.email, token: fake.token });
    const labels = Array.from({ length: 12 }, (_, index) => `agent-checkout-frontend-${index}`).join(', ');
    const trigger = await call('saveTrigger', { name: 'Jira storefront', kind: 'jira', enabled: true, pipelineId: made.demoId, connectionId: account.id, filter: { query: `project = KAN AND statusCategory != Done AND labels in (${labels})` } });
    made.jiraTriggerId = trigger.id;
    port = new URL(fake.url).port;
  } finally {
    await fake.stop();
  }
  const state = await call('pollTrigger', made.jiraTriggerId);
  const [words, details] = state.lastError.split('\nDetails: ');
  assert.is(words, `Couldn't reach Jira at 127.0.0.1:${port} (connection refused)`);
  assert.ok(details.length >= 400, `the details hold the whole request URL (${details.length} characters)`);
  assert.not.ok(state.lastError.includes(jiraToken), 'no token in the words or the details');

  await page.viewport('desktop');
  await show(page, '#/triggers');
  await page.waitFor(`document.querySelector('.trigger-list [data-id="${made.jiraTriggerId}"] .item-error')`, 10_000, 'the Jira trigger and its error in the list');
  await page.click(`.trigger-list [data-id="${made.jiraTriggerId}"]`);
  const stateError = `.trigger-state .error-text`;
  await page.waitFor(`document.querySelector('${stateError}')`, 5000, 'the poll error under the trigger');
  assert.is(await page.evaluate(`document.querySelector('.trigger-list [data-id="${made.jiraTriggerId}"] .item-error').textContent`), `✕ ${words}`, 'the list says the words alone');
  assert.match(await page.evaluate<string>(`document.querySelector('${stateError}').firstChild.textContent`), new RegExp(`✕ Couldn't reach Jira at 127\\.0\\.0\\.1:${port} \\(connection refused\\)$`));
  assert.not.ok(await page.evaluate(`document.querySelector('${stateError} details').open`), 'the details are closed at first');
  await page.evaluate(`document.querySelector('${stateError} details').open = true`);
  assert.match(await page.evaluate<string>(`document.querySelector('${stateError} [data-test="error-details"]').textContent`), new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/rest/api/3/search/jql\\?jql=project`));
  await page.evaluate(clearToasts);
  await shootAll(page, 'jira-error', `document.querySelector('.trigger-state').scrollIntoView({ block: 'center' })`);

  // Every screen, at 390 px and at 1280 px, with the error shown (and its details open where it is).
  const runId = made.approvedRunId!;
  const screens = ['#/runs', `#/runs/${runId}`, '#/pipelines', `#/pipelines/${made.demoId}`, '#/triggers', '#/projects', '#/harnesses', '#/channels', '#/inbox', '#/settings'];
  const widths: { hash: string; kind: string; width: number; inner: number; sticking: string[] }[] = [];
  for (const kind of ['phone', 'desktop'] as const) {
    await page.viewport(kind);
    await page.waitFor(`innerWidth === ${kind === 'phone' ? 390 : 1280}`, 5000, `the ${kind} viewport`);
    for (const hash of screens) {
      await show(page, hash);
      if (hash === '#/triggers') {
        await page.click(`.trigger-list [data-id="${made.jiraTriggerId}"]`);
        await page.waitFor(`document.querySelector('${stateError}')`, 5000, 'the poll error');
      }
      await page.evaluate(`document.querySelectorAll('#main details.error-details').forEach((details) => (details.open = true))`);
      await settle(page);
      widths.push({ hash, kind, inner: kind === 'phone' ? 390 : 1280, ...await pageWidth(page, kind === 'phone' ? 390 : 1280) });
    }
  }
  const tooWide = widths.filter((entry) => entry.width > entry.inner);
  assert.equal(tooWide, [], 'no screen wider than the viewport');
  const widest = widths.filter((entry) => entry.kind === 'phone').sort((a, b) => b.width - a.width)[0]!;
  measured.widest = { hash: widest.hash, width: widest.width };
  console.log(`    widest page at 390 px: ${widest.width} px (${widest.hash})`);

  // The Inbox says the same words, the details behind their disclosure.
  await page.viewport('phone');
  await show(page, '#/inbox');
  const item = `[...document.querySelectorAll('.inbox-item[data-kind="trigger.error"]')][0]`;
  await page.waitFor(item, 5000, 'the trigger error in the Inbox');
  assert.match(await page.evaluate<string>(`${item}.querySelector('.inbox-body').firstChild.firstChild.textContent`), /Couldn't reach Jira at 127\.0\.0\.1:\d+ \(connection refused\)/);
  assert.ok(await page.evaluate(`Boolean(${item}.querySelector('details.error-details'))`), 'the details behind a disclosure');
  await page.evaluate(`${item}.querySelector('details.error-details').open = true`);
  await shootAll(page, 'inbox-error', `${item}.scrollIntoView({ block: 'start' })`);
  await page.viewport('desktop');
});

phone.run();
