// End to end: finding and moving with the keyboard (issue 28.12, 28.13), on a desktop (1280×800)
// and a phone (390×844), light and dark. Pipelines, Triggers and Inbox search like Runs (a fixed
// width, filtering as you type, Escape empties); `/` focuses the page's search; j/k move through
// a list and Enter opens; the command menu (Ctrl-K) goes to a screen, opens a pipeline's Run panel
// and opens a run by id; after opening a run or approving, focus is on the page's heading; "Skip
// to content" is the first thing Tab reaches; in log search Enter goes to the next match and
// Shift-Enter to the previous. The unread badge is not the waiting badge.
// Screenshots under test-output/screenshots/navigation-*.png.
// Needs `node build.mjs --tests` first, and chromium on PATH (skipped without it, failed under CI).

import * as assert from 'uvu/assert';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { clearToasts, settle, shootSizes, show, signIn, suiteSession } from './session';

const navigation = suiteNeeding('navigation (Chromium)', [chromium]);
const { need, call, waitForRun } = suiteSession(navigation, signIn);
const made: { demoId?: string; nightlyId?: string; waitingRunId?: string; searchRunId?: string } = {};

const keyCodes: Record<string, number> = { Enter: 13, Escape: 27, Tab: 9, '/': 191, j: 74, k: 75, ArrowDown: 40, ArrowUp: 38 };

/** A real key press (the DevTools Input domain): trusted keydown, keypress text and keyup. */
async function press(page: Page, key: string, modifiers: { shift?: boolean; ctrl?: boolean } = {}): Promise<void> {
  const text = key === 'Enter' ? '\r' : key.length === 1 && !modifiers.ctrl ? key : undefined;
  const code = key.length === 1 && /[a-z]/.test(key) ? `Key${key.toUpperCase()}` : key === '/' ? 'Slash' : key;
  const event = {
    key, code, windowsVirtualKeyCode: keyCodes[key] ?? key.toUpperCase().charCodeAt(0),
    modifiers: (modifiers.shift ? 8 : 0) | (modifiers.ctrl ? 2 : 0), ...(text ? { text, unmodifiedText: text } : {}),
  };
  await page.send('Input.dispatchKeyEvent', { type: text ? 'keyDown' : 'rawKeyDown', ...event });
  await page.send('Input.dispatchKeyEvent', { type: 'keyUp', ...event });
  await settle(page);
}

/** Typing into the focused field, a character at a time, as a person would. */
async function type(page: Page, text: string): Promise<void> {
  await page.send('Input.insertText', { text });
  await settle(page);
}

/** Focuses the element (a script's click() on a field does not). */
const focus = (page: Page, selector: string) => page.evaluate(`document.querySelector(${JSON.stringify(selector)}).focus()`);
const active = (page: Page) => page.evaluate<string>(`(() => { const element = document.activeElement; return element ? [element.tagName.toLowerCase(), element.className, element.getAttribute('data-test') ?? '', element.textContent.trim().slice(0, 60)].join('|') : ''; })()`);
const visibleCount = (page: Page, selector: string) => page.evaluate<number>(`[...document.querySelectorAll(${JSON.stringify(selector)})].filter((element) => element.getClientRects().length > 0).length`);

navigation('Chromium is installed and the server and browser start', () => {
  need();
});

navigation('"Skip to content" is the first thing Tab reaches, and it moves focus to the page\'s heading', async () => {
  const { page, link } = need();
  await page.goto(link);
  await page.waitFor(`document.querySelector('.nav-link[aria-current="page"]')`, 10_000, 'the sidebar');
  // Tab from the start of the document (the Runs page may have put focus in its Start form).
  await page.evaluate(`document.body.tabIndex = -1; document.body.focus(); document.body.removeAttribute('tabindex')`);
  await press(page, 'Tab');
  const first = await active(page);
  assert.match(first, /^a\|skip-link\|skip-link\|Skip to content$/, first);
  assert.ok(await page.evaluate(`document.querySelector('.skip-link').getBoundingClientRect().top >= 0`), 'it shows when focused');
  await shootSizes(page, 'navigation-skip-link', `document.querySelector('.skip-link').focus()`);
  await page.evaluate(`document.querySelector('.skip-link').focus()`);
  const route = await page.evaluate<string>(`location.hash`);
  await press(page, 'Enter');
  assert.match(await active(page), /^h1\|/, 'the page heading has focus');
  assert.is(await page.evaluate(`location.hash`), route, 'the address stays the route (not #main)');
});

navigation('Pipelines, Triggers and Inbox search like Runs: a fixed width, filtering as you type, Escape empties', async () => {
  const { page } = need();
  const snapshot = await call('snapshot');
  made.demoId = snapshot.pipelines.find((pipeline: { name: string }) => pipeline.name === 'Demo').id;
  const nightly = await call('savePipeline', { projectId: snapshot.projects[0].id, name: 'Nightly build', variables: {}, steps: [{ id: 'build', name: 'Build', kind: 'shell', command: 'echo build' }] });
  made.nightlyId = nightly.id;
  await call('saveTrigger', { name: 'Storefront hook', kind: 'webhook', enabled: true, pipelineId: made.demoId });
  await call('saveTrigger', { name: 'Nightly hook', kind: 'webhook', enabled: true, pipelineId: nightly.id });
  const waiting = await call('startRun', { pipelineId: made.demoId, issue: { title: 'Ship the login page', key: 'WEB-3' } });
  made.waitingRunId = waiting.id;
  await waitForRun(waiting.id, ['waiting']);
  const done = await call('startRun', { pipelineId: nightly.id, issue: { title: 'Nightly of Tuesday' } });
  await waitForRun(done.id, ['succeeded']);

  const cases = [
    { hash: '#/pipelines', items: '[data-test="pipeline-row"]', query: 'nightly', expect: 'Nightly build' },
    { hash: '#/triggers', items: '.trigger-list > li', query: 'store', expect: 'Storefront hook' },
    { hash: '#/inbox', items: '.inbox-item', query: 'login', expect: 'Ship the login page' },
  ];
  for (const { hash, items, query, expect } of cases) {
    await show(page, hash);
    await page.waitFor(`document.querySelectorAll(${JSON.stringify(items)}).length >= 2`, 10_000, `two items or more on ${hash}`);
    const all = await visibleCount(page, items);
    // `/` from anywhere but a field focuses the page's search.
    await page.evaluate(`document.activeElement?.blur()`);
    await press(page, '/');
    assert.is(await page.evaluate(`document.activeElement?.getAttribute('data-test')`), 'list-search', `/ focuses the search on ${hash}`);
    assert.is(await page.evaluate(`document.querySelector('[data-test="list-search"]').value`), '', 'the / is not typed into it');
    assert.is(await page.evaluate(`document.querySelector('[data-test="list-search"]').getBoundingClientRect().width`), 260, `the search on ${hash} keeps Runs' width`);
    await type(page, query);
    assert.is(await visibleCount(page, items), 1, `${query} leaves one item on ${hash}`);
    assert.match(await page.evaluate<string>(`[...document.querySelectorAll(${JSON.stringify(items)})].find((element) => element.getClientRects().length > 0).textContent`), expect);
    if (hash === '#/pipelines') await shootSizes(page, 'navigation-search-pipelines');
    await type(page, 'zzz');
    assert.is(await visibleCount(page, items), 0);
    assert.match(await page.evaluate<string>(`document.querySelector('[data-test="list-no-match"]').textContent`), /^No .* match “.*zzz”\.$/);
    await press(page, 'Escape');
    assert.is(await visibleCount(page, items), all, `Escape shows every item on ${hash} again`);
  }
  // The query holds across a live update of the list.
  await show(page, '#/pipelines');
  await focus(page, '[data-test="list-search"]');
  await type(page, 'nightly');
  await call('savePipeline', { ...nightly, name: 'Nightly build', description: 'Every night' });
  await page.waitFor(`[...document.querySelectorAll('[data-test="pipeline-row"] .row-description')].some((element) => element.textContent === 'Every night')`, 5000, 'the live update');
  assert.is(await visibleCount(page, '[data-test="pipeline-row"]'), 1, 'still filtered after the live update');
});

navigation('j and k move through the runs; Enter opens the run and focus goes to its heading', async () => {
  const { page } = need();
  await show(page, '#/runs');
  await page.evaluate(`document.querySelector('[data-test="filter-status"]').value = ''; document.querySelector('[data-test="filter-status"]').dispatchEvent(new Event('change'))`);
  await page.waitFor(`document.querySelectorAll('[data-test="run-row"]').length === 2`, 10_000, 'two runs');
  await page.evaluate(`document.activeElement?.blur()`);
  const ids = await page.evaluate<string[]>(`[...document.querySelectorAll('[data-test="run-row"]')].map((row) => row.dataset.runId)`);
  await press(page, 'j');
  assert.is(await page.evaluate(`document.activeElement.dataset.runId`), ids[0], 'j: the first run');
  await press(page, 'j');
  assert.is(await page.evaluate(`document.activeElement.dataset.runId`), ids[1], 'j: the next run');
  await press(page, 'j');
  assert.is(await page.evaluate(`document.activeElement.dataset.runId`), ids[1], 'j at the last stays there');
  await press(page, 'k');
  assert.is(await page.evaluate(`document.activeElement.dataset.runId`), ids[0], 'k: the previous run');
  await shootSizes(page, 'navigation-runs-j', `document.querySelector('[data-test="run-row"]').focus()`);
  await page.evaluate(`document.querySelector('[data-test="run-row"]').focus()`);
  // Typed into a field, j is a letter.
  await focus(page, '[data-test="search"]');
  await press(page, 'j');
  assert.is(await page.evaluate(`document.querySelector('[data-test="search"]').value`), 'j');
  await press(page, 'Escape');
  await page.evaluate(`document.querySelector('[data-run-id="${ids[0]}"]').focus()`);
  await press(page, 'Enter');
  await page.waitFor(`location.hash === '#/runs/${ids[0]}' && document.querySelector('[data-test="run-title"]')?.textContent !== 'Loading…'`, 5000, 'the run page');
  assert.ok(await page.evaluate(`document.activeElement === document.querySelector('h1[data-test="run-title"]')`), `focus is on the run's heading, not the body: ${await active(page)}`);
});

navigation('approving moves focus to the run\'s heading', async () => {
  const { page } = need();
  await show(page, `#/runs/${made.waitingRunId}`);
  await page.waitFor(`document.querySelector('.approval-card button.primary')`, 10_000, 'the approval card');
  await page.evaluate(`document.querySelector('.approval-card input[type="radio"]')?.click()`);
  await page.evaluate(`document.querySelector('.approval-card button.primary').focus()`);
  await press(page, 'Enter');
  await waitForRun(made.waitingRunId!, ['succeeded', 'failed']);
  await page.waitFor(`!document.querySelector('.approval-card')`, 10_000, 'the card gone');
  assert.ok(await page.evaluate(`document.activeElement === document.querySelector('h1[data-test="run-title"]')`), `focus is on the run's heading: ${await active(page)}`);
});

navigation('the command menu goes to a screen, opens a pipeline\'s Run panel and a run by its id; Escape gives focus back', async () => {
  const { page } = need();
  await show(page, '#/runs');
  const menu = `document.querySelector('[data-test="command-menu"]')`;
  await page.evaluate(`document.querySelector('[data-test="search"]').focus()`);
  await press(page, 'k', { ctrl: true });
  await page.waitFor(`${menu}?.open`, 5000, 'the command menu');
  assert.is(await page.evaluate(`document.activeElement.getAttribute('data-test')`), 'command-input');
  await shootSizes(page, 'navigation-command-menu', clearToasts);
  await press(page, 'Escape');
  assert.not.ok(await page.evaluate(menu), 'Escape closes it');
  assert.is(await page.evaluate(`document.activeElement.getAttribute('data-test')`), 'search', 'focus goes back where it was');

  // Go to a screen: typed, the first row, Enter.
  await press(page, 'k', { ctrl: true });
  await type(page, 'inbox');
  assert.is(await page.evaluate(`document.querySelector('.command-item[aria-selected="true"]').textContent`), 'Go to Inbox');
  await press(page, 'Enter');
  await page.waitFor(`location.hash === '#/inbox'`, 5000, 'the inbox');
  assert.not.ok(await page.evaluate(menu));
  assert.match(await active(page), /^h1\|/, 'focus is on the new screen\'s heading');

  // A pipeline's Run panel: ↓ chooses among several rows.
  await press(page, 'k', { ctrl: true });
  await type(page, 'run');
  const rows = await page.evaluate<string[]>(`[...document.querySelectorAll('.command-item .command-label')].map((row) => row.textContent)`);
  const nightlyRow = rows.indexOf('Run Nightly build…');
  assert.ok(nightlyRow > 0, `the pipelines are offered: ${rows.join(' | ')}`);
  for (let step = 0; step < nightlyRow; step++) await press(page, 'ArrowDown');
  assert.is(await page.evaluate(`document.querySelector('.command-item[aria-selected="true"] .command-label').textContent`), 'Run Nightly build…');
  await press(page, 'Enter');
  await page.waitFor(`location.hash === '#/pipelines/${made.nightlyId}'`, 5000, 'the pipeline');
  await page.waitFor(`(() => { const panel = document.querySelector('.run-panel'); return panel && !panel.hidden && panel.contains(document.activeElement); })()`, 5000, 'its Run panel, in focus');

  // A run by its id.
  await press(page, 'k', { ctrl: true });
  await type(page, made.waitingRunId!);
  assert.match(await page.evaluate<string>(`document.querySelector('.command-item[aria-selected="true"]').textContent`), /^Open run: Ship the login page/);
  await press(page, 'Enter');
  await page.waitFor(`location.hash === '#/runs/${made.waitingRunId}'`, 5000, 'the run');
});

navigation('log search: Enter goes to the next match, Shift-Enter to the previous, wrapping at the ends', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  const pipeline = await call('savePipeline', { projectId: project.id, name: 'Matches', variables: {}, steps: [{ id: 'lines', name: 'Lines', kind: 'shell', command: 'w=mat; for n in 1 2 3 4 5; do echo "line $n"; echo "${w}ch $n"; done' }] });
  const run = await call('startRun', { pipelineId: pipeline.id });
  made.searchRunId = run.id;
  await waitForRun(run.id, ['succeeded']);
  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`[...document.querySelectorAll('[data-test="log"] .log-line')].some((row) => row.textContent === 'match 5')`, 10_000, 'the log');
  const count = `document.querySelector('[data-test="log-match-count"]').textContent`;
  const hit = `document.querySelector('.log-hit')?.textContent`;
  await focus(page, '[data-test="log-search"]');
  await type(page, 'match');
  await page.waitFor(`${count} === '1 of 5' && ${hit} === 'match 1'`, 10_000, 'the first match first');
  await press(page, 'Enter');
  await page.waitFor(`${count} === '2 of 5' && ${hit} === 'match 2'`, 5000, 'Enter: the next match');
  await press(page, 'Enter');
  await page.waitFor(`${count} === '3 of 5' && ${hit} === 'match 3'`, 5000, 'Enter: the one after');
  await press(page, 'Enter', { shift: true });
  await page.waitFor(`${count} === '2 of 5' && ${hit} === 'match 2'`, 5000, 'Shift-Enter: the previous match');
  await press(page, 'Enter', { shift: true });
  await press(page, 'Enter', { shift: true });
  await page.waitFor(`${count} === '5 of 5' && ${hit} === 'match 5'`, 5000, 'Shift-Enter at the first: the last');
  await press(page, 'Enter');
  await page.waitFor(`${count} === '1 of 5' && ${hit} === 'match 1'`, 5000, 'Enter at the last: the first');
  assert.is(await page.evaluate(`document.querySelector('[data-test="log-match-later"]').getAttribute('title')`), 'Next match (Enter)');
  await page.evaluate(clearToasts);
  await shootSizes(page, 'navigation-log-search');
});

navigation('the unread count is not the waiting count: the accent with a dot, not amber with ‖', async () => {
  const { page } = need();
  await show(page, '#/runs');
  await call('startRun', { pipelineId: made.demoId, issue: { title: 'Another waiting run' } }).then((run) => waitForRun(run.id, ['waiting']));
  await page.waitFor(`document.querySelector('.badge-waiting') && document.querySelector('.badge-unread')`, 10_000, 'both badges');
  const look = (selector: string) => page.evaluate<[string, string]>(`(() => { const badge = document.querySelector(${JSON.stringify(selector)}); return [getComputedStyle(badge).backgroundColor, getComputedStyle(badge, '::before').content]; })()`);
  const [waitingColour, waitingMark] = await look('.badge-waiting');
  const [unreadColour, unreadMark] = await look('.badge-unread');
  assert.is.not(unreadColour, waitingColour, 'another colour');
  assert.is(waitingMark, '"‖ "');
  assert.is(unreadMark, '"● "');
  await page.evaluate(`document.activeElement?.blur()`);
  await shootSizes(page, 'navigation-badges');
});

navigation.run();
