// End to end: nothing a person typed is lost, and what leads on after the demo (issue 28: 1, 2,
// 3, 9, 14, 15), in Chromium at 1280×800 and 390×844, light and dark. Each form keeps its draft
// when you switch or leave (triggers, New trigger, Settings, accounts, channels, the pipeline
// editor) or asks first (harnesses, projects), and closing the window with a draft asks; a Linear
// account is connected from the trigger form in a dialog and comes back chosen in the draft;
// Settings' switches apply at once and the bar with Save says what is unsaved; a channel's
// pipelines are checkboxes; a trigger's events come first with statuses by meaning; the
// getting-started checklist ticks itself. Screenshots under test-output/screenshots/forms-*.png.
// Needs the app built (`node build.mjs --tests`, or FACTORY_E2E_DIST) and chromium on PATH.

import * as assert from 'uvu/assert';
import { FakeLinear } from '../fakes/linear';
import { freePort, send } from '../helpers/net';
import { makeTempDir, removeTempDir } from '../helpers/temp';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { clearToasts, clickButton, fillField, settle, shootSizes, show, signIn, suiteSession } from './session';

const forms = suiteNeeding('forms (Chromium)', [chromium]);
const { need, call, waitForRun } = suiteSession(forms, signIn);

/** shootSizes after clearing the toasts: forms-<name>-{light,dark,phone-light,phone-dark}.png. */
async function shootAll(page: Page, name: string, prepare?: string): Promise<void> {
  await page.evaluate(clearToasts);
  await shootSizes(page, `forms-${name}`, prepare);
}

/** The value of the control of the field labelled `label` in `scope`. */
const valueOf = (page: Page, scope: string, label: string) => page.evaluate<string>(`[...document.querySelectorAll(${JSON.stringify(`${scope} label.form-field`)})]
  .find((field) => field.firstElementChild?.textContent === ${JSON.stringify(label)})?.querySelector('input, select, textarea')?.value`);

/** True when a beforeunload now would be held back (the window asks before it closes). */
const closeWouldAsk = `(() => { const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented; })()`;

/** Clicks the list item (a trigger, a channel) named `name` in `list`, once it is there. */
async function pick(page: Page, list: string, name: string): Promise<void> {
  const item = `[...document.querySelectorAll(${JSON.stringify(`${list} .item-button`)})].find((item) => item.querySelector('.item-title').firstChild.textContent === ${JSON.stringify(name)})`;
  await page.waitFor(item, 5000, `${name} in the list`);
  await page.evaluate(`${item}.click()`);
}

/** Answers the in-app dialog open now with the button that says `text`; returns its title. */
async function answerDialog(page: Page, text: string): Promise<string> {
  const title = await page.waitFor<string>(`document.querySelector('dialog.dialog[open] h2')?.textContent`, 5000, 'a dialog');
  await page.evaluate(`[...document.querySelectorAll('dialog.dialog[open] button')].find((button) => button.textContent === ${JSON.stringify(text)}).click()`);
  await settle(page);
  return title;
}

const made: { demoId?: string; triggerA?: string; triggerB?: string; port?: number } = {};
const triggerForm = '.triggers-page form.editor';

forms('Chromium is installed and the server and browser start', async () => {
  const { page } = need();
  made.port = await freePort();
  await call('saveSettings', { webhookServer: { port: made.port } });
  made.demoId = (await call('snapshot')).pipelines.find((pipeline: { name: string }) => pipeline.name === 'Demo').id;
  await page.evaluate(`localStorage.clear()`);
});

forms('the getting-started checklist ticks itself as each thing is done, and stays dismissed', async () => {
  const { page } = need();
  await show(page, '#/runs');
  const doneItems = `[...document.querySelectorAll('[data-test="checklist"] li.done')].map((item) => item.dataset.item).join(' ')`;
  await page.waitFor(`document.querySelector('[data-test="checklist"]') && !document.querySelector('[data-test="checklist"]').hidden`, 5000, 'the checklist');
  assert.is(await page.evaluate(doneItems), 'phone', 'on a first start only this signed-in browser counts (a paired device)');
  await shootAll(page, 'checklist');

  // The demo: ticked once a run of it succeeded, live.
  const run = await call('startRun', { pipelineId: made.demoId, issue: { title: 'Try the demo' } });
  await waitForRun(run.id, ['waiting']);
  await call('approveStep', run.id, 'choose', true, undefined, ['1']);
  await waitForRun(run.id, ['succeeded']);
  await page.waitFor(`${doneItems} === 'demo phone'`, 10_000, 'the demo ticked');
  // Your repository: a project outside Factory's data folder.
  const folder = makeTempDir('forms-repository');
  try {
    await call('saveProject', { name: 'Website', path: folder, worktrees: false });
    await page.waitFor(`${doneItems} === 'demo repository phone'`, 10_000, 'the repository ticked');
    await call('saveSettings', { webhookServer: { enabled: true } });
    await page.waitFor(`${doneItems} === 'demo repository webhooks phone'`, 10_000, 'webhooks ticked');
    assert.is(await page.evaluate(`document.querySelector('[data-test="checklist-count"]').textContent`), '4 of 5 done');
    assert.is(await page.evaluate(`document.querySelector('[data-test="checklist"] li[data-item="tracker"] a').getAttribute('href')`), '#/settings?section=accounts');
    await shootAll(page, 'checklist-ticked');

    await page.click('[data-test="checklist-dismiss"]');
    assert.ok(await page.evaluate(`document.querySelector('[data-test="checklist"]').hidden`), 'dismissed');
    await page.goto(need().link);
    await page.waitFor(`document.querySelector('.nav-link[aria-current="page"]')`, 10_000, 'the app again');
    await show(page, '#/runs');
    assert.ok(await page.evaluate(`document.querySelector('[data-test="checklist"]').hidden`), 'still dismissed after a reload');
  } finally {
    await call('saveSettings', { webhookServer: { enabled: false } });
    for (const project of (await call('snapshot')).projects) if (project.path === folder) await call('deleteProject', project.id);
    removeTempDir(folder);
  }
});

forms('switching triggers, or leaving, keeps what was typed; Discard brings the saved trigger back', async () => {
  const { page } = need();
  made.triggerA = (await call('saveTrigger', { name: 'Storefront', kind: 'webhook', enabled: true, pipelineId: made.demoId })).id;
  made.triggerB = (await call('saveTrigger', { name: 'Back office', kind: 'webhook', enabled: true, pipelineId: made.demoId })).id;
  await show(page, '#/triggers');
  await pick(page, '.trigger-list', 'Storefront');
  await fillField(page, triggerForm, 'Name', 'Storefront (renamed)');
  assert.ok(await page.evaluate(closeWouldAsk), 'closing the window with a draft asks');

  await pick(page, '.trigger-list', 'Back office');
  await settle(page);
  assert.is(await valueOf(page, triggerForm, 'Name'), 'Back office');
  assert.ok(await page.evaluate(`[...document.querySelectorAll('.trigger-list .item-button')].find((item) => item.textContent.startsWith('Storefront')).querySelector('.tag-draft')`), 'the list marks the trigger left with unsaved changes');
  await pick(page, '.trigger-list', 'Storefront');
  await settle(page);
  assert.is(await valueOf(page, triggerForm, 'Name'), 'Storefront (renamed)', 'the draft is back');
  assert.match(await page.evaluate<string>(`document.querySelector('[data-test="draft-note"]').textContent`), /Unsaved changes, kept from before/);

  // A half-filled New trigger, then another screen and back: the screen is as it was left.
  await clickButton(page, '.triggers-page .toolbar', 'New trigger');
  await fillField(page, triggerForm, 'Name', 'Half-made hook');
  await show(page, '#/runs');
  await show(page, '#/triggers');
  assert.is(await valueOf(page, triggerForm, 'Name'), 'Half-made hook', 'the New trigger draft is kept across screens');
  await shootAll(page, 'trigger-draft', `document.querySelector('[data-test="draft-note"]')?.scrollIntoView({ block: 'center' })`);
  await clickButton(page, '.triggers-page', 'Cancel');

  await pick(page, '.trigger-list', 'Storefront');
  await page.click('[data-test="draft-discard"]');
  await settle(page);
  assert.is(await valueOf(page, triggerForm, 'Name'), 'Storefront', 'Discard shows the saved trigger');
  assert.not.ok(await page.evaluate(closeWouldAsk), 'no draft left: the window closes without asking');
});

forms('Settings: a typed field and a half-made account are kept when you leave; the sticky bar says what is unsaved', async () => {
  const { page } = need();
  await show(page, '#/settings');
  const settingsForm = 'form.settings-form';
  await fillField(page, settingsForm, 'Runs at the same time', '7');
  await page.waitFor(`document.querySelector('[data-test="settings-unsaved"]').textContent === 'Unsaved: Runs at the same time'`, 5000, 'the unsaved note naming the field');
  await clickButton(page, '#main', 'Add account');
  await fillField(page, '.account-form', 'Name', 'Linear at work');
  await show(page, '#/pipelines');
  await show(page, '#/settings');
  assert.is(await valueOf(page, settingsForm, 'Runs at the same time'), '7');
  assert.is(await valueOf(page, '.account-form', 'Name'), 'Linear at work', 'the account form is kept too');
  // The bar with Save stays in view while the form scrolls.
  await page.evaluate(`document.querySelector('#settings-webhook').scrollIntoView({ block: 'start' })`);
  await settle(page);
  const bar = await page.evaluate<{ position: string; bottom: number }>(`(() => { const bar = document.querySelector('.settings-actions'); return { position: getComputedStyle(bar).position, bottom: bar.getBoundingClientRect().bottom }; })()`);
  assert.is(bar.position, 'sticky');
  assert.ok(bar.bottom <= 800, `the Save bar is in view (bottom at ${bar.bottom})`);
  await shootAll(page, 'settings-unsaved', `document.querySelector('#settings-webhook').scrollIntoView({ block: 'start' })`);
  await clickButton(page, settingsForm, 'Save settings');
  await page.waitFor(`document.querySelector('[data-test="settings-unsaved"]').textContent === ''`, 5000, 'nothing unsaved after Save');
  assert.is((await call('snapshot')).settings.maxParallelRuns, 7);
  await clickButton(page, '.account-form', 'Cancel');
  assert.not.ok(await page.evaluate(closeWouldAsk), 'saved and cancelled: nothing held');
  await call('saveSettings', { maxParallelRuns: 2 });
});

forms('Settings: switching webhooks on or off applies at once, with a toast', async () => {
  const { page } = need();
  await show(page, '#/settings');
  const toggle = `document.querySelector('#settings-webhook').closest('section').querySelector('input[role="switch"]')`;
  assert.is(await page.evaluate(`${toggle}.checked`), false);
  await page.evaluate(`${toggle}.click()`);
  await page.waitFor(`[...document.querySelectorAll('.toast')].some((toast) => toast.textContent === 'Webhook server switched on')`, 5000, 'the toast');
  assert.is((await call('snapshot')).settings.webhookServer.enabled, true, 'saved without Save settings');
  await page.waitFor(`document.querySelector('.server-status').textContent.startsWith('✓ Listening at')`, 10_000, 'the server listening');
  assert.is(await page.evaluate(`document.querySelector('[data-test="settings-unsaved"]').textContent`), '', 'a switch is no unsaved change');
  await page.evaluate(`${toggle}.click()`);
  await page.waitFor(`[...document.querySelectorAll('.toast')].some((toast) => toast.textContent.startsWith('Webhook server switched off'))`, 5000, 'the toast');
  assert.is((await call('snapshot')).settings.webhookServer.enabled, false);
});

forms('a Linear account is connected from the trigger form in place, and comes back chosen in the draft', async () => {
  const { page } = need();
  const fake = await FakeLinear.start();
  try {
    await show(page, '#/triggers');
    await clickButton(page, '.triggers-page .toolbar', 'New trigger');
    await fillField(page, triggerForm, 'Kind', 'linear');
    await fillField(page, triggerForm, 'Name', 'Linear ENG');
    await fillField(page, triggerForm, 'Team key', 'ENG');
    assert.match(await page.evaluate<string>(`document.querySelector('[data-test="connect-account"]').parentElement.textContent`), /^No Linear account yet\. Connect a Linear account$/);
    // Another account appears meanwhile and is chosen: the connected one must replace it.
    const other = await call('saveConnection', { kind: 'linear', name: 'Other Linear', token: fake.apiKey, baseUrl: fake.url });
    await page.waitFor(`document.querySelector('[data-test="connect-account"]').textContent === 'Connect another Linear account'`, 5000, 'the other account in the form');
    await fillField(page, triggerForm, 'Account', other.id);
    assert.is(await valueOf(page, triggerForm, 'Account'), other.id);
    await page.click('[data-test="connect-account"]');
    await page.waitFor(`document.querySelector('[data-test="connect-dialog"][open]')`, 5000, 'the Connect dialog');
    const dialog = '[data-test="connect-dialog"]';
    assert.ok(await page.evaluate(`document.querySelector('${dialog} select').disabled && document.querySelector('${dialog} select').value === 'linear'`), 'the kind is the trigger’s');
    await fillField(page, dialog, 'Name', 'Linear (fake)');
    await fillField(page, dialog, 'API key', fake.apiKey);
    await fillField(page, dialog, 'Base URL (optional)', fake.url);
    await shootAll(page, 'connect-dialog');
    const stored = await page.evaluate<string>(`JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])`);
    assert.not.ok(stored.includes(fake.apiKey), 'the typed key is in no storage');
    await clickButton(page, dialog, 'Add account');
    await page.waitFor(`!document.querySelector('[data-test="connect-dialog"]')`, 10_000, 'the dialog closed');
    const account = (await call('snapshot')).accounts.find((candidate: { name: string }) => candidate.name === 'Linear (fake)');
    assert.ok(account, 'the account is saved');
    assert.is(await page.evaluate('location.hash'), '#/triggers', 'still on the trigger');
    assert.is(await valueOf(page, triggerForm, 'Account'), account.id, 'the new account is chosen');
    assert.is(await valueOf(page, triggerForm, 'Name'), 'Linear ENG', 'the draft stayed');
    assert.is(await valueOf(page, triggerForm, 'Team key'), 'ENG');
    assert.match(await page.evaluate<string>(`document.querySelector('[data-test="connect-account"]').textContent`), /^Connect another Linear account$/);
    await clickButton(page, '.triggers-page', 'Cancel');
    await call('deleteConnection', account.id);
    await call('deleteConnection', other.id);
  } finally {
    await fake.stop();
  }
});

forms('channels: the pipeline filter is checkboxes, and a channel left unsaved keeps its draft', async () => {
  const { page } = need();
  await show(page, '#/channels');
  await page.waitFor(`[...document.querySelectorAll('#main button')].some((button) => button.textContent === 'Add a channel')`, 5000, 'the empty state');
  await clickButton(page, '#main', 'Add a channel');
  const channelForm = '.channels-page form.editor';
  assert.is(await page.evaluate(`document.querySelectorAll('select[multiple]').length`), 0, 'no multi-select');
  const boxes = `[...document.querySelectorAll('[data-test="channel-pipelines"] input[type="checkbox"]')]`;
  assert.ok(await page.evaluate<number>(`${boxes}.length`) >= 1, 'one checkbox per pipeline');
  await fillField(page, channelForm, 'Kind', 'ntfy');
  await fillField(page, channelForm, 'Name', 'Phone');
  await fillField(page, channelForm, 'Server and topic', 'https://ntfy.example.com/factory');
  await page.evaluate(`${boxes}.find((box) => box.parentElement.textContent === 'Demo').click()`);
  await shootAll(page, 'channel-pipelines', `document.querySelector('[data-test="channel-pipelines"]').scrollIntoView({ block: 'center' })`);
  await clickButton(page, channelForm, 'Create channel');
  await page.waitFor(`document.querySelector('.channel-list')`, 5000, 'the saved channel');
  const channel = (await call('snapshot')).channels.find((candidate: { name: string }) => candidate.name === 'Phone');
  assert.equal(channel.pipelineIds, [made.demoId], 'the ticked pipeline only');

  await fillField(page, channelForm, 'Name', 'Phone (typed)');
  await show(page, '#/inbox');
  await show(page, '#/channels');
  assert.is(await valueOf(page, channelForm, 'Name'), 'Phone (typed)', 'kept across screens');
  await page.click('[data-test="draft-discard"]');
  await settle(page);
  assert.is(await valueOf(page, channelForm, 'Name'), 'Phone');
  await call('deleteChannel', channel.id);
});

forms('harnesses and projects ask before another item replaces a draft; the pipeline editor keeps its draft', async () => {
  const { page } = need();
  await show(page, '#/harnesses');
  await clickButton(page, '.harnesses-page .toolbar', 'New custom harness');
  await fillField(page, '.harnesses-page form.editor', 'Name', 'My agent');
  await clickButton(page, '.harnesses-page .toolbar', 'New custom harness');
  assert.is(await answerDialog(page, 'Keep editing'), 'Discard your changes to this harness?');
  assert.is(await valueOf(page, '.harnesses-page form.editor', 'Name'), 'My agent', 'Keep editing keeps it');
  await clickButton(page, '.harnesses-page .toolbar', 'New custom harness');
  await answerDialog(page, 'Discard');
  assert.is(await valueOf(page, '.harnesses-page form.editor', 'Name'), '', 'Discard opens the new one');
  await clickButton(page, '.harnesses-page form.editor', 'Cancel');

  await show(page, '#/projects');
  await page.fill('.project-form input[name="name"]', 'Half-added');
  await page.click('.project-row [data-action="edit"]');
  assert.is(await answerDialog(page, 'Keep editing'), 'Discard the project you were adding?');
  assert.is(await page.evaluate(`document.querySelector('.project-form input[name="name"]').value`), 'Half-added');
  await page.fill('.project-form input[name="name"]', '');
  assert.not.ok(await page.evaluate(closeWouldAsk), 'emptied again: no draft');

  await show(page, `#/pipelines/${made.demoId}`);
  await page.waitFor(`document.querySelector('[data-field="name"] input')?.value === 'Demo'`, 5000, 'the editor');
  await page.fill('[data-field="name"] input', 'Demo (edited)');
  assert.ok(await page.evaluate(closeWouldAsk), 'closing with an unsaved pipeline asks');
  await show(page, '#/runs');
  await show(page, `#/pipelines/${made.demoId}`);
  assert.is(await page.evaluate(`document.querySelector('[data-field="name"] input').value`), 'Demo (edited)', 'the pipeline draft is kept');
  await page.click('[data-test="draft-discard"]');
  await page.waitFor(`document.querySelector('[data-field="name"] input')?.value === 'Demo'`, 5000, 'the saved pipeline after Discard');
  assert.not.ok(await page.evaluate(closeWouldAsk));
});

forms('a trigger shows its events first, statuses by meaning: started, ignored, and a forged signature in danger words', async () => {
  const { page } = need();
  const trigger = (await call('snapshot')).triggers.find((candidate: { id: string }) => candidate.id === made.triggerA);
  await call('saveSettings', { webhookServer: { enabled: true } });
  try {
    const deliver = (body: string, token: string = trigger.webhookSecret) => send(`http://127.0.0.1:${made.port}/hooks/${trigger.id}?token=${encodeURIComponent(token)}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    const started = await deliver('{"title":"Login fails on Safari","key":"WEB-12"}');
    assert.is(started.status, 201, started.text);
    assert.is((await deliver('{"title":"x"}', 'forged-secret')).status, 401);
    assert.is((await deliver('{"description":"no title"}')).status, 202);
    await show(page, '#/triggers');
    await pick(page, '.trigger-list', 'Storefront');
    await page.waitFor(`document.querySelectorAll('.ledger tbody tr').length === 3`, 5000, 'three events');
    const order = await page.evaluate<{ ledger: number; form: number }>(`({ ledger: document.querySelector('.ledger').getBoundingClientRect().top, form: document.querySelector('${triggerForm}').getBoundingClientRect().top })`);
    assert.ok(order.ledger < order.form && order.ledger < 800, `the events come first, in view (${order.ledger} < ${order.form})`);
    const rows = await page.evaluate<{ kind: string; status: string; color: string; run: string }[]>(`[...document.querySelectorAll('.ledger tbody tr')].map((row) => {
      const status = row.querySelector('[data-test="event-status"]');
      return { kind: row.className, status: status.textContent, color: getComputedStyle(status).color, run: row.querySelector('td.run').textContent };
    })`);
    const colour = (token: string) => page.evaluate<string>(`(() => { const probe = document.createElement('span'); probe.style.color = 'var(${token})'; document.body.append(probe); const color = getComputedStyle(probe).color; probe.remove(); return color; })()`);
    assert.equal(rows.map((row) => [row.kind, row.status]), [['event event-ignored', '– Ignored'], ['event event-refused', '⚠ Invalid signature'], ['event event-started', '✓ Started']]);
    assert.is(rows[0]!.color, await colour('--muted'), 'ignored is neutral');
    assert.is(rows[1]!.color, await colour('--danger'), 'a refused signature is a danger');
    assert.is(rows[2]!.color, await colour('--succeeded'), 'started is a success');
    assert.match(await page.evaluate<string>(`document.querySelector('.ledger tr.event-refused td.decision').textContent`), /possibly forged/, 'in words, not colour alone');
    assert.match(rows[2]!.run, /Login fails on Safari/, 'the run is a link by its title');
    assert.not.ok(rows.some((row) => /run_/.test(row.status)), 'no run id in the decision');
    await shootAll(page, 'trigger-events');
  } finally {
    await call('saveSettings', { webhookServer: { enabled: false } });
  }
});

forms.run();
