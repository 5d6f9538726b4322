// End to end: the list screens at Linear's density, on a desktop (1280×800) and a phone (390×844),
// light and dark. The phone's top bar counts waiting approvals and its menu closes with Escape;
// Runs shows where a run came from and the step it is at, its waiting count filters, and Start run
// says which agents are missing before it starts; the Inbox says how an approval was decided,
// filters by kind and undoes Mark all read; a trigger's ledger fits, its URL and curl carry the
// token, and Send test event starts a run through the webhook server; deleting asks in an in-app
// dialog (Escape cancels, Enter confirms); Settings in a browser makes a one-time sign-in link.
// Screenshots under test-output/screenshots/lists-*.png.
// Needs `node build.mjs --tests` first, and chromium on PATH (skipped without it, failed under CI).

import * as assert from 'uvu/assert';
import { freePort, send } from '../helpers/net';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { answerDialogsYes, clearToasts, mainText, settle, shootSizes, show, signIn, sleep, suiteSession } from './session';

/** Ids the tests share, made in order. */
const made: { demoId?: string; manualRunId?: string; triggerId?: string; hookRunId?: string } = {};

const lists = suiteNeeding('lists (Chromium)', [chromium]);
const { need, call, waitForRun } = suiteSession(lists, signIn);

/** A real key press (the DevTools Input domain), so the page sees trusted keydown events. */
async function press(page: Page, key: 'Escape' | 'Enter' | 'Tab', shift = false): Promise<void> {
  const codes = { Escape: 27, Enter: 13, Tab: 9 };
  const event = { key, code: key, windowsVirtualKeyCode: codes[key], modifiers: shift ? 8 : 0, ...(key === 'Enter' ? { text: '\r' } : {}) };
  await page.send('Input.dispatchKeyEvent', { type: 'keyDown', ...event });
  await page.send('Input.dispatchKeyEvent', { type: 'keyUp', ...event });
  await settle(page);
}

/** shootSizes under lists-<name>-{light,dark,phone-light,phone-dark}.png. */
const shootAll = (page: Page, name: string, prepare?: string): Promise<void> => shootSizes(page, `lists-${name}`, prepare);

/** Records what the page copies to the clipboard in window.copiedText. */
const recordCopies = `(() => {
  const record = (text) => { window.copiedText = text; };
  if (navigator.clipboard) navigator.clipboard.writeText = async (text) => record(text);
  document.execCommand = (command) => (command === 'copy' && record(document.activeElement.value), true);
})()`;


lists('Chromium is installed and the server and browser start', () => {
  need();
});

lists('one <main>; live regions only where things change; no window.confirm anywhere', async () => {
  const { page } = need();
  await show(page, '#/runs');
  assert.is(await page.evaluate(`document.querySelectorAll('main').length`), 1);
  const live = await page.evaluate<string[]>(`[...document.querySelectorAll('[aria-live]')].map((element) => element.className)`);
  assert.equal(live, ['toasts'], 'only the toasts announce themselves (the banner is role=status)');
  // Any window.confirm from here on is counted: the dialogs must be the app's own.
  await page.evaluate(`window.confirm = () => { window.confirmCalls = (window.confirmCalls ?? 0) + 1; return true; }`);
});

lists('the phone top bar counts the runs waiting for approval; Escape closes the menu', async () => {
  const { page } = need();
  const demo = (await call('snapshot')).pipelines.find((pipeline: { name: string }) => pipeline.name === 'Demo');
  made.demoId = demo.id;
  const run = await call('startRun', { pipelineId: demo.id, issue: { title: 'Ship the login page', key: 'WEB-3' } });
  made.manualRunId = run.id;
  await waitForRun(run.id, ['waiting']);
  await page.viewport('phone');
  await show(page, '#/runs');
  const count = await page.waitFor<string>(`(() => { const badge = document.querySelector('.top-waiting'); return badge && !badge.hidden && badge.offsetParent && badge.textContent; })()`, 5000, 'the waiting count in the top bar');
  assert.match(count, /1$/);
  assert.is(await page.evaluate(`document.querySelector('.top-waiting').getAttribute('aria-label')`), '1 waiting for approval');

  const menu = `document.querySelector('.menu-button')`;
  await page.click('.menu-button');
  assert.is(await page.evaluate(`${menu}.getAttribute('aria-expanded')`), 'true');
  await page.evaluate(`document.querySelector('#sidebar .nav-link').focus()`);
  await shootAll(page, 'menu-open', `document.querySelector('#sidebar').classList.add('open')`);
  await page.viewport('phone');
  await page.evaluate(`document.querySelector('#sidebar .nav-link').focus()`);
  await press(page, 'Escape');
  assert.is(await page.evaluate(`${menu}.getAttribute('aria-expanded')`), 'false', 'Escape closes the menu');
  assert.not.ok(await page.evaluate(`document.querySelector('#sidebar').classList.contains('open')`));
  assert.ok(await page.evaluate(`document.activeElement === ${menu}`), 'focus goes back to the menu button');

  await page.click('.top-waiting');
  await page.waitFor(`document.querySelector('[data-test="filter-status"]').value === 'waiting'`, 5000, 'Runs filtered to the waiting runs');
  assert.is(await page.evaluate(`location.hash`), '#/runs?status=waiting', 'the filter lives in the address (and only there: phone-and-undo.test.ts)');
  await page.viewport('desktop');
});

lists('Runs: the source, the current step, a fixed-width search, and a waiting count that filters', async () => {
  const { page } = need();
  const trigger = await call('saveTrigger', { name: 'Storefront hook', kind: 'webhook', enabled: true, pipelineId: made.demoId });
  made.triggerId = trigger.id;
  const port = await freePort();
  await call('saveSettings', { webhookServer: { enabled: true, port } });
  const delivered = await send(`http://127.0.0.1:${port}/hooks/${trigger.id}?token=${encodeURIComponent(trigger.webhookSecret)}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"title":"Checkout button does nothing on Safari when the cart holds more than ten items","key":"WEB-7"}',
  });
  assert.is(delivered.status, 201);
  const hookRun = (await call('snapshot')).runs.find((run: { triggerId?: string }) => run.triggerId === trigger.id);
  made.hookRunId = hookRun.id;
  await waitForRun(hookRun.id, ['waiting']);
  await call('startRun', { pipelineId: made.demoId, issue: { title: 'Rotate the certificates' } }).then((run) => waitForRun(run.id, ['waiting']))
    .then((run) => call('approveStep', run.id, 'choose', true, undefined, ['1'])).then(() => undefined);

  await show(page, '#/runs');
  await page.evaluate(`document.querySelector('[data-test="filter-status"]').value = ''; document.querySelector('[data-test="filter-status"]').dispatchEvent(new Event('change'))`);
  await page.waitFor(`document.querySelectorAll('[data-test="run-row"]').length === 3`, 10_000, 'three runs');
  const row = (id: string, part: string) => page.evaluate<string>(`document.querySelector('[data-run-id="${id}"] [data-test="${part}"]').textContent`);
  assert.is(await row(made.manualRunId!, 'run-source'), 'manual');
  assert.is(await row(made.hookRunId!, 'run-source'), 'Storefront hook');
  assert.is(await row(made.manualRunId!, 'run-step'), '2/3 · Choose');
  await page.waitFor(`[...document.querySelectorAll('[data-test="run-step"]')].some((cell) => cell.textContent === '3/3')`, 10_000, 'the finished run at 3/3');
  assert.is(await page.evaluate(`document.querySelector('[data-test="search"]').getBoundingClientRect().width`), 260, 'the search keeps its width');

  await page.click('.run-counts [data-status="waiting"]');
  await page.waitFor(`document.querySelectorAll('[data-test="run-row"]').length === 2`, 5000, 'only the two waiting runs');
  assert.is(await page.evaluate(`document.querySelector('[data-test="filter-status"]').value`), 'waiting');
  assert.is(await page.evaluate(`document.querySelector('.run-counts [data-status="waiting"]').getAttribute('aria-pressed')`), 'true');
  await page.click('.run-counts [data-status="waiting"]');
  await page.waitFor(`document.querySelectorAll('[data-test="run-row"]').length === 3`, 5000, 'all runs again');
  await page.evaluate(clearToasts);
  for (const kind of ['desktop', 'phone'] as const) {
    await page.viewport(kind);
    await settle(page);
    assert.ok(await page.evaluate(`document.documentElement.scrollWidth <= innerWidth`), `no sideways scrolling on a ${kind}`);
  }
  await shootAll(page, 'runs');
});

lists('Runs at 1280×800: a title of 50 characters is shown whole, the step and usage under it', async () => {
  const { page } = need();
  const title = 'Checkout shows the wrong total after a coupon code';
  const run = await call('startRun', { pipelineId: made.demoId, issue: { title, key: 'WEB-21' } });
  try {
    await page.viewport('desktop');
    await show(page, '#/runs');
    await page.waitFor(`document.querySelector('[data-run-id="${run.id}"] .run-row-title')?.textContent.includes(${JSON.stringify(title)})`, 10_000, 'the run in the list');
    await settle(page);
    const cell = await page.evaluate<{ scroll: number; client: number; stepUnder: boolean }>(`(() => {
      const row = document.querySelector('[data-run-id="${run.id}"]');
      const title = row.querySelector('.run-row-title'), step = row.querySelector('[data-test="run-step"]');
      return { scroll: title.scrollWidth, client: title.clientWidth, stepUnder: step.getBoundingClientRect().top >= title.getBoundingClientRect().bottom };
    })()`);
    assert.ok(cell.scroll <= cell.client, `the title is cut: ${cell.scroll} px of text in ${cell.client} px`);
    assert.ok(cell.stepUnder, 'the step is on the line under the title');
    await shootAll(page, 'runs-title', `document.querySelector('[data-run-id="${run.id}"]').scrollIntoView({ block: 'center' })`);
  } finally {
    await call('cancelRun', run.id).catch(() => undefined);
    await waitForRun(run.id, ['cancelled', 'failed', 'succeeded', 'rejected']).catch(() => undefined);
    await call('deleteRun', run.id);
  }
});

lists('Start run says which agents the pipeline needs that cannot run here, and asks before starting', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  await call('setHarnessEnabled', 'codex', false);
  const pipeline = await call('savePipeline', {
    projectId: project.id, name: 'Needs Codex', variables: {}, harnessId: 'codex',
    steps: [{ id: 'implement', name: 'Implement', kind: 'agent', prompt: 'Fix {{issue.title}}' }],
  });
  await show(page, '#/runs');
  await page.waitFor(`document.querySelector('[data-test="start-pipeline"] option[value="${pipeline.id}"]')`, 5000, 'the new pipeline to choose');
  await page.evaluate(`(() => { const select = document.querySelector('[data-test="start-pipeline"]'); select.value = ${JSON.stringify(pipeline.id)}; select.dispatchEvent(new Event('change')); })()`);
  const notice = await page.waitFor<string>(`document.querySelector('.start-run [data-test="missing-agents"]')?.textContent`, 5000, 'the missing agent under the form');
  assert.match(notice, /Step “Implement” uses Codex, which is switched off on Harnesses/);
  await page.fill('[data-test="start-title"]', 'Fix the flaky test');
  await page.click('[data-test="start-run"]');
  await page.waitFor(`document.querySelector('dialog.dialog[open]')`, 5000, 'the question before starting');
  assert.match(await page.evaluate<string>(`document.querySelector('dialog.dialog').innerText`), /Codex cannot run here, so the run will fail at “Implement”/);
  await page.evaluate(clearToasts);
  await shootAll(page, 'start-readiness');
  await press(page, 'Escape');
  assert.not.ok((await call('snapshot')).runs.some((run: { pipelineId: string }) => run.pipelineId === pipeline.id), 'no run started');
  await call('deletePipeline', pipeline.id);
  await call('setHarnessEnabled', 'codex', true);
});

lists('Inbox: a decided approval says how and is not unread; titles lead with the issue; filters by kind; Mark all read undoes', async () => {
  const { page } = need();
  await call('approveStep', made.manualRunId, 'choose', true, 'Looks good', ['2']);
  // The engine marked the item read as it decided: every client agrees (the page hears it in a snapshot event).
  const items = (await call('snapshot')).inbox.filter((item: { runId?: string; kind: string }) => item.runId === made.manualRunId && item.kind === 'run.waiting');
  assert.equal(items.map((item: { read: boolean }) => item.read), [true], 'read on the server as approveStep answers');
  await waitForRun(made.manualRunId!, ['succeeded']);
  await show(page, '#/inbox');
  const approval = `document.querySelector('.inbox-item[data-kind="run.waiting"] [data-test="decision"]')`;
  await page.waitFor(`[...document.querySelectorAll('[data-test="decision"]')].some((line) => line.textContent === '✓ Approved by you: Polish first')`, 10_000, '"Approved by you: Polish first"');
  const decidedItem = `[...document.querySelectorAll('.inbox-item')].find((element) => element.querySelector('[data-test="decision"]')?.textContent.includes('Polish first'))`;
  await page.waitFor(`${decidedItem}?.dataset.unread === 'false'`, 5000, 'the decided item shown read');
  const decided = await page.evaluate<{ unread: string; lead: string }>(`(() => {
    const item = [...document.querySelectorAll('.inbox-item')].find((element) => element.querySelector('[data-test="decision"]')?.textContent.includes('Polish first'));
    return { unread: item.dataset.unread, lead: item.querySelector('.inbox-lead').textContent };
  })()`);
  assert.equal(decided, { unread: 'false', lead: 'Ship the login page WEB-3' }, 'not unread, and led by the issue');
  assert.ok(await page.evaluate(approval), 'an approval item');
  const unreadShown = await page.evaluate<number>(`document.querySelectorAll('.inbox-item[data-unread="true"]').length`);
  const badge = await page.evaluate<string>(`[...document.querySelectorAll('.nav-link')].find((link) => link.textContent.startsWith('Inbox')).querySelector('.badge')?.textContent ?? '0'`);
  assert.is(Number(badge), unreadShown, 'the sidebar counts what the list shows as unread');

  await page.evaluate(`document.querySelector('[data-filter="Approvals"]').click()`);
  await settle(page);
  const kinds = await page.evaluate<string[]>(`[...document.querySelectorAll('.inbox-item')].map((item) => item.dataset.kind)`);
  assert.ok(kinds.length >= 2 && kinds.every((kind) => kind === 'run.waiting'), `only approvals: ${kinds}`);
  await page.evaluate(clearToasts);
  await shootAll(page, 'inbox-approvals');
  await page.evaluate(`document.querySelector('[data-filter="All"]').click()`);

  const unreadOnServer = async () => (await call('snapshot')).inbox.filter((item: { read: boolean }) => !item.read).length;
  const before = await unreadOnServer();
  assert.ok(before > 0);
  await page.evaluate(clearToasts);
  // Counts the page's markInboxRead calls: the undone one must never go out.
  await page.evaluate(`(() => {
    window.__markCalls = 0;
    const original = window.fetch;
    window.fetch = (input, init) => (String(input).includes('/api/call/markInboxRead') && (window.__markCalls += 1), original(input, init));
  })()`);
  await page.evaluate(`[...document.querySelectorAll('.inbox-page button')].find((button) => button.textContent === 'Mark all read').click()`);
  await page.waitFor(`document.querySelectorAll('.inbox-item[data-unread="true"]').length === 0`, 5000, 'every item shown read');
  await page.waitFor(`document.querySelector('.toast .toast-action')`, 5000, 'the Undo toast');
  await shootAll(page, 'inbox-undo');
  await page.click('.toast .toast-action');
  await page.waitFor(`document.querySelectorAll('.inbox-item[data-unread="true"]').length === ${unreadShown}`, 5000, 'the items unread again after Undo');
  assert.is(await unreadOnServer(), before, 'after Undo nothing reached the engine yet');
  // Marked again, without Undo: its call goes out when its toast ends. The undone one would have
  // ended first (same window, begun earlier), so once the engine has them read, one call was made.
  await page.evaluate(`[...document.querySelectorAll('.inbox-page button')].find((button) => button.textContent === 'Mark all read').click()`);
  const deadline = Date.now() + 15_000;
  while ((await unreadOnServer()) !== 0) {
    if (Date.now() > deadline) assert.unreachable('without Undo the items were not marked read when the toast ended');
    await sleep(100);
  }
  assert.is(await page.evaluate<number>('window.__markCalls'), 1, 'the undone call never went out; the second did');
});

lists('Triggers: the ledger fits; Copy and curl carry the token; Send test event starts a run; Escape closes the form', async () => {
  const { page } = need();
  const trigger = (await call('snapshot')).triggers.find((candidate: { id: string }) => candidate.id === made.triggerId);
  await show(page, '#/triggers');
  await page.waitFor(`document.querySelector('[data-test="send-test-event"]')`, 5000, 'Send test event');
  await page.evaluate(recordCopies);
  await page.evaluate(`[...document.querySelectorAll('.trigger-live button')].find((button) => button.textContent === 'Copy').click()`);
  const copied = await page.waitFor<string>('window.copiedText', 5000, 'the copied URL');
  assert.ok(copied.endsWith(`/hooks/${trigger.id}?token=${encodeURIComponent(trigger.webhookSecret)}`), `the URL carries the token: ${copied}`);
  assert.not.ok((await mainText(page)).includes(trigger.webhookSecret), 'the token is not shown until Show');
  await page.evaluate(`window.copiedText = undefined; [...document.querySelectorAll('.trigger-live button')].find((button) => button.textContent === 'Copy as curl').click()`);
  const curl = await page.waitFor<string>('window.copiedText', 5000, 'the copied curl command');
  assert.match(curl, new RegExp(`^curl -X POST '[^']*/hooks/${trigger.id}\\?token=${trigger.webhookSecret}' -H 'Content-Type: application/json' -d '\\{"title": `));

  await page.click('[data-test="send-test-event"]');
  await page.waitFor(`[...document.querySelectorAll('.ledger td.run')].some((cell) => cell.textContent === 'Test event from Factory')`, 15_000, 'the test event\'s run in the ledger, by its title');
  const runTitles = await page.evaluate<string[]>(`[...document.querySelectorAll('.ledger td.run a')].map((link) => link.textContent)`);
  assert.ok(runTitles.every((title) => !/^run_/.test(title)), `titles, not ids: ${runTitles}`);
  assert.ok(runTitles.some((title) => title.startsWith('Checkout button does nothing')));
  const started = (await call('snapshot')).runs.find((run: { issue?: { title: string } }) => run.issue?.title === 'Test event from Factory');
  assert.is(started.triggerId, trigger.id, 'a run of the trigger, through the webhook server');

  await page.evaluate(clearToasts);
  const fits = `(() => { const box = document.querySelector('.ledger .table-scroll'); return box.scrollWidth <= box.clientWidth + 1; })()`;
  for (const kind of ['desktop', 'phone'] as const) {
    await page.viewport(kind);
    await settle(page);
    assert.ok(await page.evaluate(fits), `the ledger fits on a ${kind}`);
  }
  await page.viewport('desktop');
  await shootAll(page, 'trigger-ledger', `document.querySelector('.trigger-live').scrollIntoView({ block: 'start' })`);

  await page.evaluate(`document.querySelector('.triggers-page form.editor input').focus()`);
  await press(page, 'Escape');
  assert.not.ok(await page.evaluate(`document.querySelector('.triggers-page form.editor')`), 'Escape closes the form');
});

lists('what cannot be undone asks in the app\'s own dialog: focus stays in it, Escape cancels, Enter confirms', async () => {
  const { page } = need();
  await show(page, '#/triggers');
  await page.click(`.trigger-list [data-id="${made.triggerId}"]`);
  // Reset cannot be undone (Delete can: phone-and-undo.test.ts).
  const deleteButton = `[...document.querySelectorAll('.triggers-page form.editor button')].find((button) => button.textContent === 'Reset')`;
  await page.waitFor(deleteButton, 5000, 'the Reset button');
  await page.evaluate(clearToasts);
  await page.evaluate(`${deleteButton}.focus(); ${deleteButton}.click()`);
  await page.waitFor(`document.querySelector('dialog.dialog[open]')`, 5000, 'the dialog');
  assert.match(await page.evaluate<string>(`document.querySelector('dialog.dialog').innerText`), /Reset “Storefront hook”\?[\s\S]*forgets which issues it has processed/);
  assert.is(await page.evaluate(`document.activeElement.dataset.test`), 'dialog-confirm', 'focus starts on the confirming button');
  await press(page, 'Tab');
  assert.is(await page.evaluate(`document.activeElement.dataset.test`), 'dialog-cancel', 'Tab wraps to Cancel');
  await press(page, 'Tab', true);
  assert.is(await page.evaluate(`document.activeElement.dataset.test`), 'dialog-confirm', 'Shift+Tab wraps back');
  await shootAll(page, 'dialog');
  await press(page, 'Escape');
  assert.not.ok(await page.evaluate(`document.querySelector('dialog.dialog')`), 'Escape closes it');
  assert.not.ok(await page.evaluate(`[...document.querySelectorAll('.toast')].some((toast) => toast.textContent.includes('reset'))`), 'and nothing was reset');
  assert.ok(await page.evaluate(`document.activeElement === ${deleteButton}`), 'focus returns to Reset');

  await page.evaluate(`${deleteButton}.click()`);
  await page.waitFor(`document.querySelector('dialog.dialog[open]')`, 5000, 'the dialog again');
  await press(page, 'Enter');
  await page.waitFor(`[...document.querySelectorAll('.toast')].some((toast) => toast.textContent === 'Trigger “Storefront hook” reset')`, 5000, 'Enter reset it');
  assert.is(await page.evaluate('window.confirmCalls'), undefined, 'window.confirm was never called');
});

lists('the other screens ask in the same dialog: a run deleted, answered by answerDialogsYes; a pipeline is deleted with Undo instead', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  const pipeline = await call('savePipeline', { projectId: project.id, name: 'Short-lived', variables: {}, steps: [{ id: 'hello', name: 'Hello', kind: 'shell', command: 'echo hello' }] });
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Say hello' } });
  await waitForRun(run.id, ['succeeded']);
  await page.evaluate(answerDialogsYes);
  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('[data-test="delete"]')`, 10_000, 'the run\'s Delete');
  await page.click('[data-test="delete"]');
  await page.waitFor(`location.hash === '#/runs'`, 10_000, 'back on Runs after the delete');
  assert.is(await page.evaluate(`window.__confirms.at(-1)`), 'Delete the run “Say hello”? Its logs are deleted too. This cannot be undone.');
  await show(page, '#/pipelines');
  const asked = await page.evaluate<number>(`window.__confirms.length`);
  await page.click(`[data-test="pipeline-row"][data-id="${pipeline.id}"] [data-action="delete"]`);
  await page.waitFor(`!document.querySelector('[data-test="pipeline-row"][data-id="${pipeline.id}"]')`, 10_000, 'the pipeline gone from the list');
  assert.is(await page.evaluate(`window.__confirms.length`), asked, 'no question: its toast has Undo');
  assert.is(await page.evaluate('window.confirmCalls'), undefined, 'window.confirm was never called');
});

lists('Settings in a browser makes a one-time sign-in link with its QR code, never the access token', async () => {
  const { page, token, origin } = need();
  await show(page, '#/settings');
  await page.click('[data-test="create-invite"]');
  const url = await page.waitFor<string>(`document.querySelector('[data-test="pairing-url"]')?.textContent`, 5000, 'the sign-in link');
  assert.match(url, new RegExp(`^${origin}/pair\\?t=[A-Za-z0-9_-]{43}$`));
  assert.not.ok(url.includes(token), 'not the access token');
  assert.ok(await page.evaluate(`Boolean(document.querySelector('.qr svg'))`), 'a QR code');
  assert.match(await page.evaluate<string>(`document.querySelector('[data-test="pairing-local"]').textContent`), /this machine only[\s\S]*0\.0\.0\.0/);
  await page.evaluate(clearToasts);
  await shootAll(page, 'settings-invite', `document.querySelector('.pairing-area').scrollIntoView({ block: 'center' })`);
  assert.is((await send(url)).status, 303, 'the link signs in');
  assert.is((await send(url)).status, 401, 'once');
});

lists.run();
