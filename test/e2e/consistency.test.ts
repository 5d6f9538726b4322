// End to end: the smaller faults of issue 28.16, on a desktop (1280×800) and a phone (390×844),
// light and dark. Placeholders reach WCAG AA (4.5:1) against their field in both themes; a
// trigger's variables use the pipeline editor's editor (one "Add variable" button, the same rows).
// (The unread badge's own colour is in navigation.test.ts; the tracker preview's state, labels and
// assignee in ui.test.ts.) Screenshots under test-output/screenshots/consistency-*.png.
// Needs `node build.mjs --tests` first, and chromium on PATH (skipped without it, failed under CI).

import * as assert from 'uvu/assert';
import { suiteNeeding } from '../helpers/tools';
import { chromium } from './chromium';
import { clearToasts, settle, shootSizes, show, signIn, suiteSession } from './session';

const consistency = suiteNeeding('consistency (Chromium)', [chromium]);
const { need, call } = suiteSession(consistency, signIn);

/**
 * The lowest contrast between a placeholder and its field's background on the page, with the
 * field's label: WCAG 2 relative luminance of the computed colours (the background is the first
 * opaque one from the field up).
 */
const lowestPlaceholderContrast = `(() => {
  const parse = (colour) => (colour.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => [r, g, b].map((value) => { const c = value / 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, c, index) => sum + c * [0.2126, 0.7152, 0.0722][index], 0);
  const background = (element) => {
    for (let node = element; node; node = node.parentElement) {
      const colour = parse(getComputedStyle(node).backgroundColor);
      if (colour.length === 3 || (colour.length === 4 && colour[3] === 1)) return colour.slice(0, 3);
    }
    return parse(getComputedStyle(document.documentElement).backgroundColor).slice(0, 3);
  };
  let lowest = [Infinity, ''];
  for (const field of document.querySelectorAll('input[placeholder], textarea[placeholder]')) {
    if (!field.getClientRects().length || !field.placeholder) continue;
    const [a, b] = [luminance(parse(getComputedStyle(field, '::placeholder').color)), luminance(background(field))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < lowest[0]) lowest = [Math.round(ratio * 100) / 100, field.getAttribute('aria-label') || field.placeholder];
  }
  return lowest;
})()`;

consistency('Chromium is installed and the server and browser start', () => {
  need();
});

consistency('placeholders reach 4.5:1 against their field, light and dark, on every screen with one', async () => {
  const { page } = need();
  const snapshot = await call('snapshot');
  for (const hash of ['#/runs', '#/pipelines', '#/triggers', '#/inbox', `#/pipelines/${snapshot.pipelines[0].id}`]) {
    await show(page, hash);
    for (const scheme of ['light', 'dark'] as const) {
      await page.colorScheme(scheme);
      await settle(page);
      const [ratio, field] = await page.evaluate<[number, string]>(lowestPlaceholderContrast);
      if (ratio === null) continue; // no placeholder on this screen
      assert.ok(ratio >= 4.5, `${hash} (${scheme}): the placeholder of “${field}” has ${ratio}:1`);
    }
  }
  await page.colorScheme('light');
});

consistency('a trigger\'s variables use the pipeline editor\'s editor: one "Add variable", the same rows', async () => {
  const { page } = need();
  const snapshot = await call('snapshot');
  await show(page, `#/pipelines/${snapshot.pipelines[0].id}`);
  const addButton = (scope: string) => page.evaluate<string[]>(`[...document.querySelectorAll(${JSON.stringify(`${scope} button`)})].filter((button) => /add variable/i.test(button.textContent)).map((button) => [button.textContent, button.className, button.closest('.kv') ? 'kv' : 'other'].join(' · '))`);
  const inEditor = await addButton('#main');
  assert.ok(inEditor.length > 0, 'the pipeline editor has Add variable');

  await call('saveTrigger', { name: 'Storefront hook', kind: 'webhook', enabled: true, pipelineId: snapshot.pipelines[0].id, variables: { branch: 'main' } });
  await show(page, '#/triggers');
  await page.waitFor(`[...document.querySelectorAll('#main button')].some((button) => button.textContent === 'Add variable')`, 10_000, 'the trigger form');
  const inTrigger = await addButton('#main');
  assert.equal(inTrigger, [inEditor[0]], 'the same button: its words, its look, in the same editor');
  assert.is(await page.evaluate(`document.querySelector('#main .kv .kv-row .kv-key').value`), 'branch', 'the saved variable in a row of the same editor');
  await page.evaluate(`[...document.querySelectorAll('#main button')].find((button) => button.textContent === 'Add variable').click()`);
  assert.is(await page.evaluate(`document.querySelectorAll('#main .kv .kv-row').length`), 2, 'a row added');
  assert.ok(await page.evaluate(`document.activeElement.classList.contains('kv-key')`), 'its name field in focus');
  assert.is(await page.evaluate(`document.querySelectorAll('#main .kv legend').length`), 0, 'no second legend inside the form\'s Variables group');
  await page.evaluate(clearToasts);
  await shootSizes(page, 'consistency-trigger-variables', `document.querySelector('#main .kv').scrollIntoView({ block: 'center' })`);
});

consistency.run();
