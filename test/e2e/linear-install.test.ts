// End to end (issue 28, "the Linear agent install flow"): Settings → Accounts → "Linear as an
// agent (OAuth app)" → Connect gives Linear's authorize page; the test does what Linear would (it
// asks the fake Linear's /oauth/authorize with that page's parameters, the person approving at
// once) and the browser follows the redirect to Factory's callback on remote access, which says
// the account is connected; Settings → Accounts then shows it connected as the app. The same
// callback URL again (its state used) is refused in words, without asking Linear for a token.
// The headless server's authorize page is linear.app, so the browser never opens it. Chromium at
// 1280×800 and 390×844, light and dark. Needs `node build.mjs --tests` first (or FACTORY_E2E_DIST).
import * as assert from 'uvu/assert';
import { FakeLinear } from '../fakes/linear';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { clearToasts, clickButton, fillField, shootSizes, show, signIn, suiteSession } from './session';

const install = suiteNeeding('linear install (Chromium)', [chromium]);
const { need, call } = suiteSession(install, signIn);
const accountForm = '.account-form';
const bodyText = (page: Page) => page.evaluate<string>(`document.body.innerText`);

install('Connect, approve at Linear, the callback connects the app; a replayed callback is refused', async () => {
  const { page, browser } = need();
  const fake = await FakeLinear.start();
  // Linear's page opens in a tab of its own, and Linear sends the person back to the callback there.
  // Only the tab in front paints (requestAnimationFrame, screenshots), so each is brought to the front.
  const linearTab = await browser.newPage();
  await page.send('Page.bringToFront');
  try {
    // Settings → Accounts: a Linear agent account with the OAuth app's client id and secret.
    await show(page, '#/settings?section=accounts');
    await clickButton(page, '#main', 'Add account');
    await fillField(page, accountForm, 'Kind', 'linear-agent');
    await page.waitFor(`[...document.querySelectorAll('${accountForm} label.form-field')].some((field) => field.firstElementChild.textContent === 'Client ID')`, 5000, 'the agent form');
    const remote = (await call('snapshot')).remote.url as string;
    const callbackUrl = `${remote}/oauth/linear/callback`;
    assert.match(await page.evaluate<string>(`document.querySelector('${accountForm}').innerText`), callbackUrl, 'the form names the callback URL to register');
    // Its Copy button copies that URL whole (on a phone the URL wraps mid-word).
    await page.evaluate(`window.__copied = []; navigator.clipboard.writeText = async (text) => { window.__copied.push(text); }`);
    await page.evaluate(`document.querySelector('${accountForm} button[aria-label="Copy the callback URL"]').click()`);
    await page.waitFor(`window.__copied.length === 1`, 5000, 'the callback URL copied');
    assert.equal(await page.evaluate<string[]>('window.__copied'), [callbackUrl]);
    await fillField(page, accountForm, 'Name', 'Linear agent (fake)');
    await fillField(page, accountForm, 'Client ID', fake.oauthApp.clientId);
    await fillField(page, accountForm, 'Client secret', fake.oauthApp.clientSecret);
    await fillField(page, accountForm, 'Base URL (optional)', fake.url);
    // The app opens Linear's page in a new tab (window.open); that tab would load linear.app, so
    // the test keeps the URL instead, as the person's browser would be handed it.
    await page.evaluate(`window.__opened = []; window.open = (url) => { window.__opened.push(String(url)); return null; }`);
    await clickButton(page, accountForm, 'Connect');
    const href = await page.waitFor<string>(`[...document.querySelectorAll('${accountForm} .test-result:not([hidden]) a')].find((a) => a.textContent === 'Open Linear’s page')?.href`, 10_000, 'the "Open Linear’s page" link')
      .catch(async (error) => {
        throw new Error(`${error.message}; the form says: ${await page.evaluate<string>(`document.querySelector('${accountForm}')?.innerText`)}`);
      });
    assert.match(await page.evaluate<string>(`document.querySelector('${accountForm} .test-result').textContent`), /Approve the app on Linear’s page/);
    assert.equal(await page.evaluate<string[]>('window.__opened'), [href], 'Connect opened the same page once');
    assert.not.ok(await page.evaluate(`document.body.innerHTML.includes(${JSON.stringify(fake.oauthApp.clientSecret)})`), 'the client secret is nowhere in the page');
    await page.evaluate(clearToasts);
    await shootSizes(page, 'linear-agent-connect', `document.querySelector('${accountForm} .test-result').scrollIntoView({ block: 'center' })`);

    // The authorize page Factory sends the person to, with what Linear needs.
    const authorize = new URL(href);
    assert.is(`${authorize.origin}${authorize.pathname}`, 'https://linear.app/oauth/authorize');
    const query = authorize.searchParams;
    assert.is(query.get('client_id'), fake.oauthApp.clientId);
    assert.is(query.get('redirect_uri'), callbackUrl, 'Linear sends the person back to the callback on remote access');
    assert.is(query.get('response_type'), 'code');
    assert.is(query.get('scope'), 'read,write,app:assignable,app:mentionable');
    assert.is(query.get('actor'), 'app', 'installed as the app, not as the person');
    const state = query.get('state') ?? '';
    assert.ok(state.length >= 32, `a long random state: ${state.length} characters`);

    // What Linear does once the person approves: it redirects to the callback with a code and the state.
    const approved = await fetch(`${fake.url}/oauth/authorize${authorize.search}`, { redirect: 'manual' });
    assert.is(approved.status, 302, await approved.text());
    const back = approved.headers.get('location') ?? '';
    const backUrl = new URL(back);
    assert.is(`${backUrl.origin}${backUrl.pathname}`, callbackUrl);
    assert.is(backUrl.searchParams.get('state'), state);
    assert.ok(backUrl.searchParams.get('code'), 'the redirect carries a code');

    await linearTab.send('Page.bringToFront');
    await linearTab.goto(back);
    const connected = await bodyText(linearTab);
    assert.match(connected, /Linear is connected/, connected);
    assert.match(connected, `The Linear account Linear agent (fake) is connected as the app ${fake.appUser.name}.`, connected);
    assert.not.match(connected, backUrl.searchParams.get('code')!, 'the code is not on the page');
    assert.is(connected.split('You can close this page.').length, 2, `said once: ${connected}`);
    assert.is(fake.tokenRequests.length, 1, 'one token request');
    assert.is(fake.tokenRequests[0]!.get('grant_type'), 'authorization_code');
    await shootSizes(linearTab, 'linear-agent-callback');

    // Back in Factory's tab, Settings → Accounts shows the account (without a reload): connected, as the app's own user.
    await page.send('Page.bringToFront');
    await page.waitFor(`document.querySelector('.account-list')?.innerText.includes(${JSON.stringify(`Signed in as ${fake.appUser.name}`)})`, 10_000, 'the account in the list, as the app')
      .catch(async (error) => {
        throw new Error(`${error.message}; the page says: ${(await bodyText(page)).slice(0, 2000)}`);
      });
    const row = await page.evaluate<string>(`[...document.querySelectorAll('.account-list li')].find((item) => item.innerText.includes('Linear agent (fake)'))?.innerText ?? ''`);
    assert.match(row, `Signed in as ${fake.appUser.name}`, row);
    assert.match(row, 'as an agent (OAuth app)', row);
    const saved = (await call('snapshot')).accounts.find((account: { name: string }) => account.name === 'Linear agent (fake)');
    assert.ok(saved?.hasToken, 'the account is saved with its token');
    assert.is(saved.account?.name, fake.appUser.name);
    assert.not.ok(await page.evaluate(`document.body.innerHTML.includes(${JSON.stringify(fake.oauthApp.clientSecret)})`), 'the client secret is nowhere in the page');
    // The form gave way to what happened: connected as the app, with Done; no fields, no Connect.
    const outcome = await page.evaluate<{ text: string; controls: number; done: boolean }>(`(() => {
      const form = document.querySelector('${accountForm}');
      return { text: form?.innerText ?? '', controls: form?.querySelectorAll('input, select, textarea, button[type="submit"]').length ?? -1,
        done: [...(form?.querySelectorAll('button') ?? [])].some((button) => button.textContent === 'Done') };
    })()`);
    assert.match(outcome.text, `“Linear agent (fake)” is connected as ${fake.appUser.name}.`, outcome.text);
    assert.is(outcome.controls, 0, `the agent form is closed: ${outcome.text}`);
    assert.ok(outcome.done, 'a Done button');
    await page.evaluate(clearToasts);
    await shootSizes(page, 'linear-agent-accounts', `document.querySelector('.account-list').scrollIntoView({ block: 'center' })`);

    // Its draft is gone: leaving Settings and coming back shows it afresh, not a kept form.
    await show(page, '#/runs');
    await show(page, '#/settings?section=accounts');
    await page.waitFor(`document.querySelector('.account-list')?.innerText.includes('Linear agent (fake)')`, 5000, 'Settings → Accounts again');
    assert.not.ok(await page.evaluate(`document.querySelector('${accountForm}, [data-test="draft-note"]')`), 'no form or draft kept');

    // The same callback URL again: its state was used, so it is refused in words, and Linear is not asked.
    const replay = await fetch(back, { redirect: 'manual' });
    assert.is(replay.status, 400, 'a replayed callback is refused');
    await replay.text();
    await linearTab.send('Page.bringToFront');
    await linearTab.goto(back);
    const refused = await bodyText(linearTab);
    assert.match(refused, /Linear is not connected/, refused);
    assert.match(refused, /not one Factory is waiting for: it is older than ten minutes, was used already/, refused);
    assert.match(refused, /Start again from Settings → Accounts/, refused);
    assert.is(fake.tokenRequests.length, 1, 'a replay makes no token request');
    await shootSizes(linearTab, 'linear-agent-replayed');
  } finally {
    try {
      await linearTab.send('Page.close').catch(() => undefined);
      for (const account of (await call('snapshot')).accounts) await call('deleteConnection', account.id);
    } finally {
      await fake.stop();
    }
  }
});

install.run();
