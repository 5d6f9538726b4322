// End to end (issue 22.12): a refused save says its problems in words, and each still shows at its
// field, because the field paths travel beside the words (`fields` of the 400 answer) instead of
// before them. Settings, the trigger editor and the projects form, in Chromium over remote access.
// Needs the app built (`node build.mjs --tests`, or FACTORY_E2E_DIST); skipped when Chromium is
// missing (test/helpers/tools.ts).

import * as assert from 'uvu/assert';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { clickButton, fillField, show, signIn, suiteSession } from './session';

const fieldErrors = suiteNeeding('field errors in words (Chromium)', [chromium]);
const { need, call } = suiteSession(fieldErrors, signIn);

/** The error shown at the `label.form-field` labelled `label` inside `scope`, or ''. */
function errorAt(scope: string, label: string): string {
  return `[...document.querySelectorAll(${JSON.stringify(`${scope} label.form-field`)})].find((field) => field.firstElementChild.textContent === ${JSON.stringify(label)})?.querySelector('.field-error:not([hidden])')?.textContent ?? ''`;
}

/** Every error text the form shows, at fields and in its general message. */
function shownErrors(page: Page, scope: string): Promise<string> {
  return page.evaluate<string>(`[...document.querySelectorAll(${JSON.stringify(`${scope} .field-error:not([hidden]), ${scope} .form-summary:not([hidden])`)})].map((element) => element.textContent).join('\\n')`);
}

fieldErrors('Settings: bad allowed host names show at their field, in words without remoteAccess.allowedHosts', async () => {
  const { page } = need();
  await show(page, '#/settings');
  const label = 'Allowed host names, one per line';
  await fillField(page, 'form.settings-form', label, 'not a host!');
  await clickButton(page, 'form.settings-form', 'Save settings');
  const shown = await page.waitFor<string>(`(${errorAt('form.settings-form', label)}) || undefined`, 5000, 'the error at the allowed host names');
  assert.match(shown, /^The allowed host names must be a list of names/);
  const everything = await shownErrors(page, 'form.settings-form');
  assert.not.match(everything, 'remoteAccess', 'no field path anywhere in the form');
  assert.is(await page.evaluate<boolean>(`document.querySelector('form.settings-form .form-error').hidden`), true, 'no heading left over below the form');
  assert.equal((await call('snapshot')).settings.remoteAccess.allowedHosts, [], 'nothing saved');
});

fieldErrors('Triggers: an empty name shows at the Name field, in words without name:', async () => {
  const { page } = need();
  const editor = '.triggers-page form.editor';
  await show(page, '#/triggers');
  await clickButton(page, '.toolbar', 'New trigger');
  await page.waitFor(`document.querySelector(${JSON.stringify(editor)})`, 5000, 'the trigger editor');
  await fillField(page, editor, 'Name', '   ');
  await clickButton(page, editor, 'Create trigger');
  const shown = await page.waitFor<string>(`(${errorAt(editor, 'Name')}) || undefined`, 5000, 'the error at Name');
  assert.is(shown, 'The name is empty: a trigger needs a name');
  assert.not.match(await shownErrors(page, editor), /(^|\n)\w+(\.\w+)*: /, 'no field path before any words');
  assert.equal((await call('snapshot')).triggers, [], 'nothing saved');
});

fieldErrors('Projects: a relative folder shows at the Folder field, in words without path:', async () => {
  const { page } = need();
  await show(page, '#/projects');
  const form = 'form.project-form';
  await page.waitFor(`document.querySelector(${JSON.stringify(form)})`, 5000, 'the project form');
  const before = (await call('snapshot')).projects.length;
  await page.evaluate(`(() => {
    const form = document.querySelector(${JSON.stringify(form)});
    const set = (field, value) => { const control = form.querySelector('[data-field="' + field + '"] input'); control.value = value; control.dispatchEvent(new Event('input', { bubbles: true })); };
    set('name', 'Elsewhere');
    set('path', 'relative/folder');
    form.requestSubmit();
  })()`);
  const shown = await page.waitFor<string>(`document.querySelector('${form} [data-field="path"] [data-test="field-error"]')?.textContent`, 5000, 'the error at Folder');
  assert.is(shown, 'The folder must be an absolute path such as /home/me/app, not `relative/folder`');
  assert.is(await page.evaluate<boolean>(`document.querySelector('${form} .form-summary')?.hidden ?? true`), true, 'no heading left over');
  assert.is((await call('snapshot')).projects.length, before, 'nothing saved');
});

fieldErrors.run();
