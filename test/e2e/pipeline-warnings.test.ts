// End to end: the pipeline editor shows what saving would warn about, in amber at the field, when
// the pipeline opens, after a save and when a field loses focus; a placeholder where the shell runs
// text as code is a field error. The headless server (dist/server.js, dist/ui) driven through
// Debian's Chromium. Needs `node build.mjs --tests` first; skipped when Chromium is missing, failed
// under CI=true (test/helpers/tools.ts).

import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { screenshots, show, signIn, suiteSession } from './session';

/** The texts of the warnings (or errors) shown in the command field of the first step card. */
function commandMessages(page: Page, kind: 'field-warning' | 'field-error'): Promise<string[]> {
  return page.evaluate<string[]>(`[...document.querySelectorAll('.step-card [data-field="command"] [data-test="${kind}"]')].map((element) => element.textContent)`);
}

async function setCommand(page: Page, command: string): Promise<void> {
  await page.fill('[data-test="step-command"]', command);
  await page.evaluate(`document.querySelector('[data-test="step-command"]').blur()`);
}

const editor = suiteNeeding('pipeline editor warnings (Chromium)', [chromium]);
const { need, call } = suiteSession(editor, signIn);

editor('a warning is shown at the command when the pipeline opens, after a blur and after a save; a code place is a field error', async () => {
  const { page } = need();
  const projectId = (await call('snapshot')).projects[0].id;
  const pipeline = await call('savePipeline', { projectId, name: 'Nested shell', variables: {}, steps: [{ id: 'build', name: 'Build', kind: 'shell', command: 'sh -c "make {{issue.title}}"' }] });
  await show(page, `#/pipelines/${pipeline.id}`);
  await page.waitFor(`document.querySelector('[data-test="step-command"]')`, 5000, 'the editor');

  // On opening.
  await page.waitFor(`document.querySelector('[data-test="field-warning"]')`, 5000, 'a warning when the pipeline opens');
  const opened = await commandMessages(page, 'field-warning');
  assert.is(opened.length, 1);
  assert.match(opened[0]!, 'is parsed as code again by `sh -c`');
  const colour = await page.evaluate<string[]>(`[getComputedStyle(document.querySelector('[data-test="field-warning"]')).color, getComputedStyle(document.querySelector('.field-error, .dirty-note') ?? document.body).color]`);
  assert.ok(colour[0] !== 'rgb(0, 0, 0)', `the warning is coloured: ${colour[0]}`);
  await page.evaluate(`document.querySelector('[data-test="field-warning"]').scrollIntoView({ block: 'center' })`);
  await page.screenshot(join(screenshots, 'editor-warning-light.png'));
  const invalid = await page.evaluate<string | null>(`document.querySelector('[data-test="step-command"]').getAttribute('aria-invalid')`);
  assert.is(invalid, null, 'a warning does not mark the field invalid');

  // When the field loses focus: the warning follows the text.
  await setCommand(page, `echo '{{issue.title}}'`);
  await page.waitFor(`[...document.querySelectorAll('[data-test="field-warning"]')].some((element) => element.textContent.includes('single quotes'))`, 5000, 'the single-quote warning after a blur');
  assert.is((await commandMessages(page, 'field-warning')).length, 1);
  await setCommand(page, 'echo "{{issue.title}}"');
  await page.waitFor(`document.querySelectorAll('[data-test="field-warning"]').length === 0`, 5000, 'no warning for a double-quoted placeholder');

  // A code place is an error at the field on blur, and saving is refused.
  await setCommand(page, 'echo $(( {{issue.title}} + 1 ))');
  await page.waitFor(`document.querySelector('[data-test="field-error"]')`, 5000, 'a field error after a blur');
  assert.match((await commandMessages(page, 'field-error'))[0]!, 'where the shell runs text as code');
  await page.click('[data-test="save-pipeline"]');
  await page.waitFor(`document.querySelector('.form-summary:not([hidden])')`, 5000, 'the refused save');
  assert.match((await commandMessages(page, 'field-error')).join('\n'), 'stands inside $(( ))');

  // After a save that works, with a warning.
  await setCommand(page, 'eval "make {{issue.title}}"');
  await page.click('[data-test="save-pipeline"]');
  await page.waitFor(`document.querySelector('.dirty-note')?.textContent === ''`, 5000, 'the save');
  await page.waitFor(`document.querySelector('[data-test="field-warning"]')`, 5000, 'the warning after the save');
  assert.match((await commandMessages(page, 'field-warning'))[0]!, 'is parsed as code again by `eval`');
  assert.equal(await commandMessages(page, 'field-error'), []);
  const stored = (await call('snapshot')).pipelines.find((candidate: { id: string }) => candidate.id === pipeline.id);
  assert.is(stored.steps[0].command, 'eval "make {{issue.title}}"');
  assert.not.ok('warnings' in stored);
});

editor.run();
