// End to end: the headless server (dist/server.js, dist/ui) driven through Debian's Chromium over
// the DevTools protocol. Covers sign-in, a demo run with an approval, the pipeline editor's field
// errors, escaping of hostile text, the page's network and console hygiene, screenshots of every
// screen (light, dark, phone) under test-output/screenshots/, the log view at 1,000,000 lines, and a
// Linear, a GitHub and a Jira account and trigger set up through the UI against fakes (test/fakes/).
// Needs `node build.mjs --tests` first, and chromium on PATH (apt-get install chromium); without it
// the tests are skipped, or failed under CI=true (test/helpers/tools.ts).

import * as assert from 'uvu/assert';
import { FakeGitHub } from '../fakes/github';
import { FakeJira } from '../fakes/jira';
import { FakeLinear, linearErrors } from '../fakes/linear';
import { freePort, send } from '../helpers/net';
import { suiteNeeding } from '../helpers/tools';
import { chromium, type Page } from './chromium';
import { clearToasts, clickButton, fillField, mainText, settle, shoot, shootPhone, show, suiteSession } from './session';

const ui = suiteNeeding('ui (Chromium)', [chromium]);
// Not signed in yet: the first test signs in with the link.
const { need, call, waitForRun } = suiteSession(ui);

/** Ids the later tests share. */
const made: { demoPipelineId?: string; demoRunId?: string } = {};
/** Failed loads the flow causes on purpose (the editor's refused save): URL substrings. */
const expectedFailedRequests: string[] = [];

ui('Chromium is installed and the server and browser start', () => {
  need();
});

ui('the sign-in link signs in and lands on Runs', async () => {
  const { page, link } = need();
  await page.goto(link);
  await page.waitFor(`location.pathname === '/' && (location.hash === '' || location.hash === '#/runs')`, 5000, 'the redirect to /');
  const current = await page.waitFor<string>(`document.querySelector('.nav-link[aria-current="page"]')?.textContent`, 10_000, 'the sidebar')
    .catch(async (error) => {
      throw new Error(`${error.message}\nthe page shows: ${(await page.evaluate<string>('document.body.innerText').catch(() => '?')).slice(0, 300)}`);
    });
  assert.ok(current.includes('Runs'), `the sidebar marks ${JSON.stringify(current)}, not Runs`);
  const cookie = await page.evaluate<string>('document.cookie');
  assert.not.ok(cookie.includes('factory_session'), 'the session cookie is HttpOnly (not readable from the page)');
});

ui('the demo run is started from the UI, approved with a choice and a comment, and succeeds', async () => {
  const { page } = need();
  await show(page, '#/runs');
  // The start form may sit behind a "New run" button.
  const hasForm = `Boolean(document.querySelector('[data-test="start-pipeline"]'))`;
  if (!(await page.evaluate(hasForm))) {
    await page.evaluate(`document.querySelector('[data-test="new-run"]')?.click()`);
  }
  await page.waitFor(hasForm, 10_000, '[data-test="start-pipeline"] on Runs');
  const pipelineId = await page.evaluate<string>(`(() => {
    const select = document.querySelector('[data-test="start-pipeline"]');
    const option = Array.from(select.options).find((o) => o.textContent.trim() === 'Demo' || o.textContent.trim().startsWith('Demo'));
    if (!option) return '';
    select.value = option.value;
    select.dispatchEvent(new Event('input', { bubbles: true }));
    select.dispatchEvent(new Event('change', { bubbles: true }));
    return option.value;
  })()`);
  assert.ok(pipelineId, 'the pipeline select offers "Demo"');
  made.demoPipelineId = pipelineId;
  await page.fill('[data-test="start-title"]', 'Try Factory');
  await page.click('[data-test="start-run"]');
  const hash = await page.waitFor<string>(`/^#\\/runs\\/[^/]+$/.test(location.hash) && location.hash`, 10_000, 'the run page (#/runs/<id>)');
  made.demoRunId = decodeURIComponent(hash.slice('#/runs/'.length));

  await page.waitFor(`document.querySelector('[data-test="approval"]')`, 15_000, 'the approval card');
  await page.waitFor(`document.querySelector('[data-test="choice"][value="2"]')`, 5000, 'option 2 of the approval');
  const question = await page.evaluate<string>(`document.querySelector('[data-test="approval"]').innerText`);
  assert.ok(question.includes('Try Factory'), `the approval card shows the question with the title: ${question}`);
  // Screenshots of the waiting run (light, dark, phone) and of Runs on a phone while it waits.
  await shoot(page, 'run-approval');
  await shootPhone(page, 'run-approval');
  await show(page, '#/runs');
  await page.waitFor(`document.querySelector('#main').innerText.includes('Try Factory')`, 5000, 'the run in the Runs list');
  await shootPhone(page, 'runs');
  await show(page, hash);
  await page.waitFor(`document.querySelector('[data-test="choice"][value="2"]')`, 10_000, 'the approval card again');

  await page.click('[data-test="choice"][value="2"]');
  await page.fill('[data-test="comment"]', 'Looks good, <b>polish</b> the edges');
  await page.click('[data-test="approve"]');
  await page.waitFor(`document.querySelector('[data-test="run-status"]')?.textContent.includes('succeeded')`, 15_000, 'run-status "succeeded"');
  const run = await call('getRun', made.demoRunId);
  assert.is(run.status, 'succeeded');

  const hasReport = `document.querySelector('#main').innerText.includes('You chose: Polish first') && document.querySelector('#main').innerText.includes('Your comment: Looks good, <b>polish</b> the edges')`;
  try {
    await page.waitFor(hasReport, 3000);
  } catch {
    // Select the last step of the timeline, then read its log.
    await page.evaluate(`(() => {
      const steps = document.querySelectorAll('[data-test="step"], [data-test="timeline-step"], .timeline button, .timeline a, .steps button');
      const last = steps[steps.length - 1];
      (last?.querySelector('button, a') ?? last)?.click();
    })()`);
    await page.waitFor(hasReport, 10_000, 'the last step\'s log with "You chose: Polish first" and the comment');
  }
  // The Demo project's folder is used as it is: its setup log says there was nothing to set up.
  await page.click('[data-test="setup-log"]');
  await page.waitFor(`document.querySelector('#main').innerText.includes('Nothing to set up: the project folder is used as it is.')`, 5000, 'the empty setup log explained');
});

ui('the pipeline editor shows a field error for an emptied command', async () => {
  const { page } = need();
  await show(page, '#/pipelines');
  await shoot(page, 'pipelines');
  await page.waitFor(`document.querySelector('[data-test="pipeline-row"]')`, 5000, 'a pipeline row');
  await page.evaluate(`(() => {
    const row = document.querySelector('[data-test="pipeline-row"]');
    const link = row.matches('a') ? row : row.querySelector('a') ?? row;
    link.click();
  })()`);
  await page.waitFor(`/^#\\/pipelines\\/[^/]+$/.test(location.hash)`, 5000, 'the editor (#/pipelines/<id>)');
  await page.waitFor(`document.querySelector('[data-test="step-command"]')`, 5000, 'a step command field');
  await shoot(page, 'editor');
  expectedFailedRequests.push('/api/call/savePipeline');
  await page.fill('[data-test="step-command"]', '');
  await page.click('[data-test="save-pipeline"]');
  const error = await page.waitFor<string>(`document.querySelector('[data-test="field-error"]')?.textContent`, 5000, 'a field error');
  assert.match(error.toLowerCase(), 'command', `the field error mentions the command: ${error}`);
  await shoot(page, 'editor-error', ['light']);
});

ui('hostile titles and pipeline names are shown as text, never run', async () => {
  const { page, origin } = need();
  const project = (await call('snapshot')).projects[0];
  const pipeline = await call('savePipeline', {
    projectId: project.id, name: 'Evil <b>bold</b> pipeline', variables: {},
    steps: [{ id: 'hello', name: 'Hello <i>there</i>', kind: 'shell', command: 'echo "<script>window.__xss=2</script>"' }],
  });
  const title = '<img src=x onerror="window.__xss=1">';
  const injected = `Array.from(document.querySelectorAll('#main img[src="x"], #main [onerror], #main b, #main i, #main script')).filter((el) => el.matches('img, [onerror], script') || ['bold', 'there'].includes(el.textContent)).length`;
  // The page's Content-Security-Policy refuses inline scripts and handlers, so window.__xss can only
  // be set without it: each refusal is a securitypolicyviolation event, noted from now on.
  await page.evaluate(`(() => { window.__violations = []; document.addEventListener('securitypolicyviolation', (event) => window.__violations.push(\`\${event.effectiveDirective} \${event.blockedURI} at \${event.target.nodeName}\`), true); })()`);
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title } });
  await waitForRun(run.id, ['succeeded', 'failed']);

  await show(page, '#/runs');
  await page.waitFor(`document.querySelector('#main').textContent.includes('<img src=x')`, 10_000, 'the hostile title as text on Runs');
  assert.ok(await page.evaluate(`document.querySelector('#main').textContent.includes('<b>bold</b>')`), 'the pipeline name appears literally on Runs');
  assert.is(await page.evaluate(injected), 0, 'no element made from data on Runs');

  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('#main').textContent.includes('<img src=x')`, 10_000, 'the hostile title as text on the run page');
  await page.waitFor(`document.querySelector('#main').textContent.includes('<script>window.__xss=2</script>')`, 10_000, 'the hostile log line as text');
  assert.is(await page.evaluate(injected), 0, 'no element made from data on the run page');

  await show(page, '#/inbox');
  await page.waitFor(`document.querySelector('#main').textContent.includes('<img src=x')`, 10_000, 'the hostile title as text in the inbox');
  assert.is(await page.evaluate(injected), 0, 'no element made from data in the inbox');
  // A script made from data runs (or is refused) as it is inserted; an <img src=x onerror> only when
  // its load of x has failed. A probe image, made now, whose load of x?xss-probe fails (404): once its
  // error event came, the failed loads of images the screens made before it have had theirs.
  expectedFailedRequests.push('/x?xss-probe');
  await page.evaluate(`(() => { window.__probe = ''; const probe = new Image(); probe.addEventListener('error', () => { window.__probe = 'failed'; }); probe.src = 'x?xss-probe'; })()`);
  await page.waitFor(`window.__probe === 'failed'`, 10_000, 'the probe image\'s failed load of x?xss-probe');
  await settle(page); // a refusal's securitypolicyviolation event comes in a task of its own
  assert.equal(await page.evaluate<string[]>('window.__violations'), [], 'no script or handler made from data was even tried (the CSP refused none)');
  assert.is(await page.evaluate('typeof window.__xss'), 'undefined', 'no injected script ran');
  assert.equal(page.problems.requests.filter((url) => url === `${origin}/x`), [], 'no image of data loaded x');
});

/**
 * Counts the app's calls (fetch of /api/call/…) not answered yet, in window.__callsPending: a call
 * counts until its answer has been read to the end and a task has run after that, by when the
 * screen that made it has shown the answer (its code runs in the microtasks of the read).
 */
const trackCalls = `(() => {
  if (window.__callsPending !== undefined) return;
  window.__callsPending = 0;
  const fetchAsTheAppDoes = window.fetch;
  window.fetch = function (input, init) {
    const answer = fetchAsTheAppDoes.call(this, input, init);
    if (!String(input?.url ?? input).includes('/api/call/')) return answer;
    window.__callsPending += 1;
    const answered = () => setTimeout(() => { window.__callsPending -= 1; });
    answer.then((response) => response.clone().text()).then(answered, answered);
    return answer;
  };
})()`;

ui('every screen renders (screenshots in light and dark)', async () => {
  const { page } = need();
  const heading = (text: string) => `document.querySelector('#main h1')?.textContent === ${JSON.stringify(text)}`;
  const has = (selector: string) => `document.querySelector(${JSON.stringify(`#main ${selector}`)})`;
  // What each screen shows once its data is in: the snapshot's (the sign-in waited for it), or what
  // the screen reads itself (the run and its log, the editor's warnings, the projects' run branches).
  const screens: [name: string, hash: string, ready: string][] = [
    ['runs', '#/runs', `${heading('Runs')} && ${has('[data-test="run-row"]')}`],
    ['run', `#/runs/${made.demoRunId ?? 'missing'}`, `${has('[data-test="run-status"]')} && ${has('[data-test="step"]')}`],
    ['pipelines', '#/pipelines', `${heading('Pipelines')} && ${has('[data-test="pipeline-row"]')}`],
    ['editor', `#/pipelines/${made.demoPipelineId ?? 'missing'}`, has('[data-test="step-command"]')],
    ['triggers', '#/triggers', heading('Triggers')],
    ['harnesses', '#/harnesses', `${heading('Harnesses')} && ${has('li.harness')}`],
    ['channels', '#/channels', heading('Channels')],
    ['inbox', '#/inbox', `${heading('Inbox')} && ${has('.inbox-item')}`],
    ['settings', '#/settings', `${heading('Settings')} && ${has('form.settings-form')}`],
    ['projects', '#/projects', `${heading('Projects')} && ${has('.project-row')}`],
  ];
  // …and in every screen: the calls it made answered, and no "Loading…" (the run's title, its log) left.
  const filledIn = `window.__callsPending === 0 && !/\\bloading\\b/i.test(document.querySelector('#main').innerText)`;
  await page.evaluate(trackCalls);
  const broken: string[] = [];
  for (const [name, hash, ready] of screens) {
    await show(page, hash);
    try {
      await page.waitFor(`(${ready}) && ${filledIn}`, 10_000, `${name} with its data (${ready})`);
    } catch (error) {
      broken.push(`${hash}: ${(error as Error).message}; calls pending: ${await page.evaluate('window.__callsPending')}`);
    }
    const text = await mainText(page);
    if (/Something went wrong|Not found|This screen is being built/.test(text)) broken.push(`${hash}: ${text.slice(0, 120)}`);
    await shoot(page, name);
  }
  await show(page, '#/runs');
  assert.equal(broken, [], `screens that did not render:\n${broken.join('\n')}`);
});

ui('Settings keeps the worktrees of finished runs for as many days as asked, and refuses a negative count at its field', async () => {
  const { page } = need();
  await show(page, '#/settings');
  const label = 'Keep worktrees of finished runs (days)';
  expectedFailedRequests.push('/api/call/saveSettings');
  const shownError = `[...document.querySelectorAll('form.settings-form label.form-field')].find((field) => field.firstElementChild.textContent === ${JSON.stringify(label)})?.querySelector('.field-error:not([hidden])')?.textContent ?? ''`;
  await fillField(page, 'form.settings-form', label, '-1');
  await clickButton(page, 'form.settings-form', 'Save settings');
  await page.waitFor(`(${shownError}).includes('retention')`, 5000, 'the retention error at its field');
  assert.is((await call('snapshot')).settings.worktreeRetentionDays, 7, 'nothing saved');
  await fillField(page, 'form.settings-form', label, '3');
  await clickButton(page, 'form.settings-form', 'Save settings');
  await page.waitFor(`[...document.querySelectorAll('.toast')].some((toast) => toast.textContent.includes('Settings saved'))`, 5000, 'the settings saved');
  assert.is(await page.evaluate<string>(shownError), '', 'the error is gone');
  assert.is((await call('snapshot')).settings.worktreeRetentionDays, 3);
  await call('saveSettings', { worktreeRetentionDays: 7 });
});

ui('a trigger shows its URL and a ledger of what each delivery decided', async () => {
  const { page } = need();
  const pipeline = (await call('snapshot')).pipelines.find((candidate: { name: string }) => candidate.name === 'Demo');
  const trigger = await call('saveTrigger', { name: 'From the tracker', kind: 'webhook', enabled: true, pipelineId: pipeline.id });
  const port = await freePort();
  await call('saveSettings', { webhookServer: { enabled: true, port } });
  const deliver = (body: string, token: string = trigger.webhookSecret) => send(`http://127.0.0.1:${port}/hooks/${trigger.id}?token=${encodeURIComponent(token)}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  assert.is((await deliver('{"title":"Login fails on Safari","key":"WEB-12"}')).status, 201);
  assert.is((await deliver('{"title":"Login fails on Safari","key":"WEB-12"}')).status, 200);
  assert.is((await deliver('{"title":"x"}', 'wrong-secret')).status, 401);
  assert.is((await deliver('{"description":"no title"}')).status, 202);
  await show(page, '#/triggers');
  await page.waitFor(`document.querySelectorAll('.ledger tbody tr').length === 4`, 5000, 'four ledger rows');
  const decisions = await page.evaluate<string[]>(`[...document.querySelectorAll('.ledger tbody tr')].map((row) => row.dataset.decision)`);
  assert.equal(decisions.map((decision) => decision.replace(/run_\w+/, 'run_…')), ['ignored: no title', 'invalid signature', 'already processed', 'started run_…']);
  assert.match(await mainText(page), new RegExp(`/hooks/${trigger.id}`));
  await page.evaluate(`document.querySelector('.ledger').scrollIntoView({ block: 'end' })`);
  await shoot(page, 'trigger-ledger');
  await call('saveSettings', { webhookServer: { enabled: false, port } });
});

// The tracker walkthroughs (Linear, GitHub, Jira) below take the same steps in Settings → Accounts
// and Triggers; these helpers take them, and each test keeps its own checks.
const accountForm = '.account-form';
const triggerEditor = '.triggers-page form.editor';
/** The `label.form-field` labelled `label` inside `scope` (an expression for page.evaluate). */
const field = (scope: string, label: string) => `[...document.querySelectorAll(${JSON.stringify(`${scope} label.form-field`)})].find((field) => field.firstElementChild.textContent === ${JSON.stringify(label)})`;
/** The error shown at that field, if any. */
const fieldError = (scope: string, label: string) => `${field(scope, label)}.querySelector('.field-error:not([hidden])')?.textContent`;
/** Whether `text` stands anywhere in the screen's HTML. */
const inPage = (text: string) => `document.querySelector('#main').innerHTML.includes(${JSON.stringify(text)})`;

/**
 * Runs a tracker's walkthrough with the webhook server on (at `port`). Whatever happens, the trigger
 * it saved and every account are deleted, the webhook server is turned off and the fake is stopped:
 * nothing polls a stopped fake in the tests after this one.
 */
async function withTracker(fake: { stop(): Promise<void> }, walk: (saved: { triggerId?: string }) => Promise<void>): Promise<void> {
  const port = await freePort();
  const saved: { triggerId?: string } = {};
  try {
    await call('saveSettings', { webhookServer: { enabled: true, port } });
    await walk(saved);
  } finally {
    try {
      if (saved.triggerId) await call('deleteTrigger', saved.triggerId);
      for (const account of (await call('snapshot')).accounts) await call('deleteConnection', account.id);
      await call('saveSettings', { webhookServer: { enabled: false, port } });
    } finally {
      await fake.stop();
    }
  }
}

/** Settings → Accounts → Add account, of `kind` (`kindName` in its placeholder). */
async function addAccount(page: Page, kind: string, kindName: string): Promise<void> {
  await clickButton(page, '#main', 'Add account');
  await fillField(page, accountForm, 'Kind', kind);
  await page.waitFor(`document.querySelector('${accountForm} input')?.placeholder === ${JSON.stringify(`${kindName} at work`)}`, 5000, `the ${kindName} account form`);
}

/** Verify at the account form, until it says `signedIn`. */
async function verifyAccount(page: Page, signedIn: string): Promise<void> {
  await clickButton(page, accountForm, 'Verify');
  await page.waitFor(`document.querySelector('${accountForm} .test-result.ok')?.textContent.includes(${JSON.stringify(signedIn)})`, 10_000, `"${signedIn}" at the form`)
    .catch(async (error) => {
      throw new Error(`${error.message}; the form says: ${await page.evaluate<string>(`document.querySelector('${accountForm}').innerText`)}`);
    });
}

/** Screenshots of the verified form (`<kind>-account`), then saves it; resolves with the account named `name`. */
async function saveAccount(page: Page, kind: string, name: string, signedIn: string): Promise<any> {
  await page.evaluate(`document.querySelector('#settings-accounts').scrollIntoView({ block: 'start' })`);
  await shoot(page, `${kind}-account`);
  await shootPhone(page, `${kind}-account`, '#settings-accounts');
  await page.click(`${accountForm} button[type="submit"]`);
  await page.waitFor(`document.querySelector('.account-list')?.innerText.includes(${JSON.stringify(signedIn)}) && !document.querySelector('${accountForm}')`, 10_000, 'the saved account in the list');
  return (await call('snapshot')).accounts.find((candidate: { name: string }) => candidate.name === name);
}

/** Triggers → New trigger of `kind` (`kindName` in its title), named `name`, running the Demo pipeline. */
async function newTrigger(page: Page, kind: string, kindName: string, name: string): Promise<void> {
  const demo = (await call('snapshot')).pipelines.find((candidate: { name: string }) => candidate.name === 'Demo');
  await show(page, '#/triggers');
  await clickButton(page, '.toolbar', 'New trigger');
  await fillField(page, triggerEditor, 'Kind', kind);
  await page.waitFor(`document.querySelector('.triggers-page .editor-title')?.textContent === ${JSON.stringify(`New ${kindName} trigger`)}`, 5000, `the ${kindName} editor`);
  await fillField(page, triggerEditor, 'Name', name);
  await fillField(page, triggerEditor, 'Runs pipeline', demo.id);
}

/** Preview in the trigger editor: the previewed issues' texts, sorted. */
async function previewIssues(page: Page): Promise<string[]> {
  await clickButton(page, triggerEditor, 'Preview');
  await page.waitFor(`document.querySelectorAll('.preview-list li').length > 0`, 10_000, 'the previewed issues')
    .catch(async (error) => {
      const said = await page.evaluate<string>(`[...document.querySelectorAll('${triggerEditor} .field-error:not([hidden]), ${triggerEditor} .test-result:not([hidden])')].map((element) => element.textContent).join(' | ')`);
      throw new Error(`${error.message}; the form says: ${said || 'nothing'}`);
    });
  const previewed = await page.evaluate<string[]>(`[...document.querySelectorAll('.preview-list li .issue-preview-head')].map((item) => item.textContent)`);
  return [...previewed].sort();
}

/** Screenshots of the preview: `<kind>-preview`. */
async function shootPreview(page: Page, kind: string): Promise<void> {
  await page.evaluate(clearToasts);
  await page.evaluate(`document.querySelector('${triggerEditor} .form-actions').scrollIntoView({ block: 'center' })`);
  await shoot(page, `${kind}-preview`);
  await shootPhone(page, `${kind}-preview`, '.preview-list');
}

/** Create trigger; resolves with the trigger saved as `name` (kept in `saved` to be deleted). */
async function createTrigger(page: Page, name: string, saved: { triggerId?: string }): Promise<any> {
  await clickButton(page, triggerEditor, 'Create trigger');
  await page.waitFor(`document.querySelector('.triggers-page .editor-title')?.textContent === ${JSON.stringify(name)}`, 10_000, 'the saved trigger in the editor');
  const trigger = (await call('snapshot')).triggers.find((candidate: { name: string }) => candidate.name === name);
  saved.triggerId = trigger?.id;
  return trigger;
}

/** Poll now, until the ledger shows a started run. */
async function pollStartsRun(page: Page): Promise<void> {
  await clickButton(page, triggerEditor, 'Poll now');
  await page.waitFor(`[...document.querySelectorAll('.ledger tbody tr')].some((row) => /^started run_/.test(row.dataset.decision))`, 15_000, 'a "started run_…" ledger entry');
}

/** Screenshots of the saved trigger: `<kind>-trigger` and, scrolled to its ledger, `<kind>-trigger-ledger`. */
async function shootTrigger(page: Page, kind: string): Promise<void> {
  await page.evaluate(clearToasts);
  await page.evaluate('scrollTo(0, 0)');
  await shoot(page, `${kind}-trigger`);
  await page.evaluate(`document.querySelector('.trigger-live').scrollIntoView({ block: 'start' })`);
  await shoot(page, `${kind}-trigger-ledger`);
  await shootPhone(page, `${kind}-trigger-ledger`, '.trigger-live');
}

/**
 * Waits (10 s at the most) until `done()`, a fake's state: it changes as the fake answers Factory,
 * which the page does not show, so it is looked at every 25 ms. Fails with `failure()` after that.
 */
async function waitUntil(done: () => boolean, failure: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) assert.unreachable(failure());
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

ui('a Linear account and trigger are set up in the UI: Verify, Preview, save, Poll now', async () => {
  const { page } = need();
  const fake = await FakeLinear.start();
  await withTracker(fake, async (saved) => {
    fake.addIssue({ title: 'Checkout <b>button</b> does nothing' });
    fake.addIssue({ title: 'Dark mode contrast', state: 'In Progress', labels: ['design', 'a11y'], assignee: fake.viewer });
    fake.addIssue({ title: 'Already shipped', state: 'Done' });
    fake.addIssue({ title: 'Rotate the certificates', team: 'OPS' });

    // Settings → Accounts: add the account, verify it, save it.
    await show(page, '#/settings');
    await clickButton(page, '#main', 'Add account');
    await fillField(page, accountForm, 'Name', 'Linear (fake)');
    await fillField(page, accountForm, 'Base URL (optional)', fake.url);
    await clickButton(page, accountForm, 'Verify');
    assert.match(await page.waitFor<string>(fieldError(accountForm, 'API key'), 10_000, 'the error at API key'), 'API key', 'no key: the message sits at the key field');
    await fillField(page, accountForm, 'API key', 'lin_api_wrong');
    await clickButton(page, accountForm, 'Verify');
    const refusal = await page.waitFor<string>(`document.querySelector('.account-form .test-result.error')?.textContent`, 10_000, 'the refusal of a wrong key');
    assert.match(refusal, /^✕ .*key/i, `a wrong key is refused in words: ${refusal}`);
    await fillField(page, accountForm, 'API key', fake.apiKey);
    const signedIn = `Signed in as ${fake.viewer.name} (${fake.viewer.email})`;
    await verifyAccount(page, signedIn);
    const account = await saveAccount(page, 'linear', 'Linear (fake)', signedIn);
    await shoot(page, 'linear-accounts');
    assert.ok(account?.hasToken, 'the account is saved with its key');
    assert.not.ok(await page.evaluate(inPage(fake.apiKey)), 'the key is nowhere in the page');

    // Triggers: a new Linear trigger for team ENG, previewed, saved and polled.
    await newTrigger(page, 'linear', 'Linear', 'Linear ENG');
    assert.is(await page.evaluate(`${field(triggerEditor, 'Account')}.querySelector('select').value`), account.id, 'the only Linear account is chosen');
    // A team the account does not see: the engine's message shows at the Team key field.
    await fillField(page, triggerEditor, 'Team key', 'NOPE');
    await clickButton(page, triggerEditor, 'Preview');
    assert.match(await page.waitFor<string>(fieldError(triggerEditor, 'Team key'), 10_000, 'the error at Team key'), 'no team with the key');
    await fillField(page, triggerEditor, 'Team key', 'ENG');
    assert.equal(await previewIssues(page), ['ENG-1 Checkout <b>button</b> does nothing', 'ENG-2 Dark mode contrast'], 'the open ENG issues, their titles as text');
    assert.match(await page.evaluate<string>(`document.querySelector('.preview-list a').href`), /^https:\/\/linear\.app\/acme\/issue\/ENG-/);
    // Besides key and title: the state, the labels and the assignee, as Linear holds them (issue 28.16).
    const facts = await page.evaluate<string[]>(`[...document.querySelectorAll('.preview-list li')].map((item) => [...item.querySelectorAll('[data-test^="preview-"]:not([data-test="preview-issue"])')].map((part) => part.textContent).join(' | '))`);
    assert.equal(facts.sort(), [`In Progress | design | a11y | Assigned to ${fake.viewer.name}`, 'Todo | Unassigned'].sort());
    await shootPreview(page, 'linear');

    const triggerId = (await createTrigger(page, 'Linear ENG', saved))?.id;
    assert.ok(triggerId, 'the trigger is saved');
    await pollStartsRun(page);
    const state = await page.evaluate<string>(`document.querySelector('.trigger-state').textContent`);
    assert.match(state, /^Last poll /, `the state line: ${state}`);
    assert.match(await mainText(page), new RegExp(`/hooks/${triggerId}`));
    assert.not.match(await mainText(page), /\?token=/, 'no ?token= for a Linear trigger');
    // Linear's rate limit: the state line says until when polling pauses.
    fake.script(linearErrors.rateLimited(Date.now() + 10 * 60_000), (request) => request.fields.includes('issues'));
    await clickButton(page, triggerEditor, 'Poll now');
    await page.waitFor(`document.querySelector('.trigger-state .warning')?.textContent.includes('Rate limited until')`, 15_000, '"Rate limited until" in the state line');
    const limited = await page.evaluate<string>(`document.querySelector('.trigger-state').textContent`);
    assert.is(limited.match(/rate limited until/gi)?.length, 1, `the rate limit is said once: ${limited}`);
    assert.match(limited, /Linear's rate limit/i, `with Linear's words: ${limited}`);
    await shootTrigger(page, 'linear');
  });
});

ui('a GitHub account and trigger are set up in the UI: Verify, Preview, save, Poll now, a label at start', async () => {
  const { page } = need();
  const fake = await FakeGitHub.start();
  await withTracker(fake, async (saved) => {
    fake.addRepo('acme-corp/storefront-web');
    const checkout = fake.addIssue('acme-corp/storefront-web', { title: 'Checkout <b>button</b> does nothing', labels: ['bug'] });
    fake.addIssue('acme-corp/storefront-web', { title: 'Dark mode contrast' });
    fake.addIssue('acme-corp/storefront-web', { title: 'Already shipped', state: 'closed' });
    fake.addIssue('acme-corp/storefront-web', { title: 'Bump the dependencies', pullRequest: true });
    fake.addIssue('acme/api', { title: 'Rotate the certificates' });

    // Settings → Accounts: a GitHub account against the fake, verified and saved.
    await show(page, '#/settings');
    await addAccount(page, 'github', 'GitHub');
    await fillField(page, accountForm, 'Name', 'GitHub (fake)');
    await fillField(page, accountForm, 'Token', fake.token);
    await fillField(page, accountForm, 'Base URL (optional)', fake.url);
    const signedIn = `Signed in as ${fake.user.login}`;
    await verifyAccount(page, signedIn);
    const account = await saveAccount(page, 'github', 'GitHub (fake)', signedIn);
    assert.ok(account?.hasToken, 'the account is saved with its token');
    await clickButton(page, '.account-list', 'Edit');
    await shoot(page, 'github-account-edit', ['light']);
    await clickButton(page, accountForm, 'Cancel');
    assert.not.ok(await page.evaluate(inPage(fake.token)), 'the token is nowhere in the page');

    // Triggers: a new GitHub trigger for acme-corp/storefront-web, previewed, saved and polled.
    await newTrigger(page, 'github', 'GitHub', 'GitHub website');
    // A repository the token cannot read: the engine's message shows at the Repository field.
    await fillField(page, triggerEditor, 'Repository', 'acme/nope');
    await clickButton(page, triggerEditor, 'Preview');
    assert.match(await page.waitFor<string>(fieldError(triggerEditor, 'Repository'), 10_000, 'the error at Repository'), 'acme/nope');
    await fillField(page, triggerEditor, 'Repository', 'acme-corp/storefront-web');
    await fillField(page, triggerEditor, 'Label at start', 'factory: running');
    assert.equal(await previewIssues(page), ['acme-corp/storefront-web#1 Checkout <b>button</b> does nothing', 'acme-corp/storefront-web#2 Dark mode contrast'], 'the open issues of acme-corp/storefront-web, no pull request, titles as text');
    assert.match(await page.evaluate<string>(`document.querySelector('.preview-list a').href`), /^https:\/\/github\.com\/acme-corp\/storefront-web\/issues\/\d$/);
    await shootPreview(page, 'github');

    const triggerId = (await createTrigger(page, 'GitHub website', saved))?.id;
    assert.ok(triggerId, 'the trigger is saved');
    await pollStartsRun(page);
    const text = await mainText(page);
    assert.match(text, new RegExp(`/hooks/${triggerId}`));
    assert.not.match(text, /\?token=/, 'no ?token= for a GitHub trigger');
    assert.match(text, /Settings → Webhooks → Add webhook/);
    await waitUntil(() => fake.labelsOf(checkout).includes('factory: running'), () => `the label at start is not on acme-corp/storefront-web#1: ${fake.labelsOf(checkout).join(', ')}`);
    await shootTrigger(page, 'github');
  });
});

ui('a Jira Cloud account and trigger are set up in the UI: a JQL query, Preview, save, the URL with its token, Poll now', async () => {
  const { page } = need();
  const fake = await FakeJira.start({ mode: 'cloud' });
  await withTracker(fake, async (saved) => {
    const checkout = fake.addIssue({ project: 'ABC', summary: 'Checkout <b>button</b> does nothing', labels: ['agent'] });
    fake.addIssue({ project: 'ABC', summary: 'Dark mode contrast', labels: ['agent'], status: 'In Progress' });
    fake.addIssue({ project: 'ABC', summary: 'Already shipped', labels: ['agent'], status: 'Done' });
    fake.addIssue({ project: 'ABC', summary: 'Nobody asked the agent' });
    fake.addIssue({ project: 'KAN', summary: 'Another project', labels: ['agent'] });

    // Settings → Accounts: a Jira Cloud account (site, email, API token), verified and saved.
    await show(page, '#/settings');
    await page.waitFor(`document.querySelector('.account-list')?.hidden`, 5000, 'no account left by the tests before');
    await addAccount(page, 'jira', 'Jira');
    await fillField(page, accountForm, 'Name', 'Jira (fake)');
    await fillField(page, accountForm, 'Site', fake.url);
    await fillField(page, accountForm, 'Email (Jira Cloud)', fake.email);
    await fillField(page, accountForm, 'Token', fake.token);
    const signedIn = `Signed in as ${fake.me.displayName} (${fake.me.emailAddress}, Jira Cloud)`;
    await verifyAccount(page, signedIn);
    const account = await saveAccount(page, 'jira', 'Jira (fake)', signedIn);
    await shoot(page, 'jira-accounts', ['light']);
    assert.ok(account?.hasToken, 'the account is saved with its token');
    assert.is(account.account?.server, 'Jira Cloud');
    assert.not.ok(await page.evaluate(inPage(fake.token)), 'the token is nowhere in the page');

    // Triggers: a new Jira trigger with a JQL query, a random secret prefilled, previewed, saved and polled.
    await newTrigger(page, 'jira', 'Jira', 'Jira ABC');
    assert.ok((await page.evaluate<string>(`${field(triggerEditor, 'Webhook secret')}.querySelector('input').value`)).length >= 32, 'a new Jira trigger starts with a random secret');
    assert.is(await page.evaluate(`${field(triggerEditor, 'Account')}.querySelector('select').value`), account.id, 'the only Jira account is chosen');
    // A query Jira refuses: Jira's own message shows at the Query field.
    await fillField(page, triggerEditor, 'Query', 'project = NOPE AND labels = agent');
    await clickButton(page, triggerEditor, 'Preview');
    assert.match(await page.waitFor<string>(fieldError(triggerEditor, 'Query'), 10_000, 'the error at Query'), /^Jira: .*'NOPE'/);
    await page.evaluate(clearToasts);
    await page.evaluate(`document.querySelector('${triggerEditor} textarea').scrollIntoView({ block: 'center' })`);
    await shoot(page, 'jira-query-error', ['light']);
    await fillField(page, triggerEditor, 'Query', 'project = ABC AND labels = agent AND statusCategory != Done');
    await fillField(page, triggerEditor, 'Transition at start', 'In Progress');
    assert.equal(await previewIssues(page), ['ABC-1 Checkout <b>button</b> does nothing', 'ABC-2 Dark mode contrast'], 'the issues the query matches, titles as text');
    await shootPreview(page, 'jira');

    const trigger = await createTrigger(page, 'Jira ABC', saved);
    const triggerId = trigger?.id;
    assert.ok(triggerId && trigger.webhookSecret, 'the trigger is saved with its secret');
    // The URL carries the secret as ?token=: shown hidden, copied whole.
    const text = await mainText(page);
    assert.match(text, new RegExp(`/hooks/${triggerId}\\?token=•••`));
    assert.not.ok(text.includes(trigger.webhookSecret), 'the secret is not shown in the URL');
    assert.match(text, /Settings → System → WebHooks/);
    await page.evaluate(`(() => {
      const record = (text) => { window.copiedText = text; };
      if (navigator.clipboard) navigator.clipboard.writeText = async (text) => record(text);
      const execCommand = document.execCommand.bind(document);
      document.execCommand = (command, ...rest) => command === 'copy' ? (record(document.activeElement.value), true) : execCommand(command, ...rest);
    })()`);
    await clickButton(page, '.trigger-live', 'Copy');
    const copied = await page.waitFor<string>('window.copiedText', 5000, 'the copied URL');
    assert.ok(copied.endsWith(`/hooks/${triggerId}?token=${encodeURIComponent(trigger.webhookSecret)}`), `the copied URL carries the secret: ${copied}`);
    await clickButton(page, triggerEditor, 'Show');
    assert.ok((await mainText(page)).includes(`?token=${encodeURIComponent(trigger.webhookSecret)}`), 'Show shows the token in the URL too');
    await clickButton(page, triggerEditor, 'Hide');

    await pollStartsRun(page);
    await waitUntil(() => checkout.status === 'In Progress', () => `the transition at start did not move ABC-1: it is ${checkout.status}`);
    // Jira posts to the copied URL: the token in it is accepted.
    const created = fake.addIssue({ project: 'ABC', summary: 'Arrived by webhook', labels: ['agent'] });
    const delivered = await fake.deliver(copied, fake.payload('jira:issue_created', created));
    assert.ok(delivered.status >= 200 && delivered.status < 300, `the webhook to the copied URL is accepted: HTTP ${delivered.status} ${JSON.stringify(delivered.body)}`);
    await page.waitFor(`[...document.querySelectorAll('.ledger tr')].some((row) => row.cells[1]?.textContent === 'webhook' && row.cells[2]?.textContent === ${JSON.stringify(created.key)})`, 15_000, `a webhook entry for ${created.key}`);
    await shootTrigger(page, 'jira');
  });
});

ui('a 1,000,000-line log opens at its tail, pages back, searches on the server and downloads', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  const pipeline = await call('savePipeline', {
    projectId: project.id, name: 'Count', variables: {},
    steps: [{ id: 'count', name: 'Count', kind: 'shell', command: 'seq 1 1000000' }],
  });
  const rows = `document.querySelectorAll('[data-test="log"] .log-line').length`;
  const hasLine = (text: string) => `[...document.querySelectorAll('[data-test="log"] .log-line')].some((row) => row.textContent === ${JSON.stringify(text)})`;
  /** The text of the line at the top of the log's viewport (under the sticky marker row). */
  const topLine = `(() => { const log = document.querySelector('[data-test="log"]'); const edge = log.scrollTop + log.querySelector('.log-marker').offsetHeight; return [...log.querySelectorAll('.log-line')].find((row) => row.offsetTop >= edge)?.textContent; })()`;

  // Live: the view follows the flood with a bounded DOM; a marker row stands for what it skipped.
  // A flood outruns the live events (256 KB each): one starts with a marker row for what it skipped,
  // which may leave the bounded window within a frame (or never reach it): an observer notes it, for
  // the log, and the most rows the log held after each change (what a look every so often could miss).
  await page.evaluate(`(() => {
    window.__liveRows = 0;
    window.__liveObserver = new MutationObserver((changes) => {
      for (const change of changes) for (const row of change.addedNodes) if (row.classList?.contains('info') && /lines skipped/.test(row.textContent)) window.__liveMarker ||= row.textContent;
      window.__liveRows = Math.max(window.__liveRows, ${rows});
    });
    window.__liveObserver.observe(document.querySelector('#main'), { childList: true, subtree: true });
  })()`);
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Count' } });
  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`${JSON.stringify(['succeeded', 'failed', 'cancelled', 'rejected'])}.includes(document.querySelector('[data-test="run-status"]')?.title)`, 60_000, 'the run of seq 1 1000000 finished on its page');
  const [liveRows, liveMarker] = await page.evaluate<[number, string]>('window.__liveObserver.disconnect(), [window.__liveRows, window.__liveMarker ?? ""]');
  assert.is((await call('getRun', run.id)).status, 'succeeded');
  // The tail is read again after a marker: the live rows end up in order, without repeats.
  const inOrder = `(() => { const numbers = [...document.querySelectorAll('[data-test="log"] .log-line')].map((row) => row.textContent).filter((text) => /^\\d+$/.test(text)).map(Number); return numbers.at(-1) === 1000000 && numbers.every((value, index) => index === 0 || value === numbers[index - 1] + 1); })()`;
  await page.waitFor(inOrder, 5000, 'the live rows up to 1000000, in order');

  // Opening the finished log: its tail, a bounded DOM, a marker row counting the rest. (How soon the
  // tail shows is a figure of test/bench/ui.bench.ts, not a test.)
  await show(page, '#/runs');
  await page.evaluate(`location.hash = ${JSON.stringify(`#/runs/${run.id}`)}`);
  await page.waitFor(hasLine('1000000'), 10_000, 'the last line (1000000) after opening');
  const tailRows = await page.evaluate<number>(rows);
  const total: number = (await call('readStepLog', run.id, 'count', 1, { limit: 1 })).at(-1).n;
  const marker = await page.evaluate<string>(`document.querySelector('[data-test="log-earlier"]').textContent`);
  await shoot(page, 'run-log-tail', ['light']);
  assert.ok(marker.startsWith(`… ${(total - tailRows).toLocaleString('en')} earlier lines`), `the marker row counts the lines before the tail: ${marker}`);

  // Scrolling to the top reads the page before, and the line at the top stays there.
  const before = await page.evaluate<string>(`(document.querySelector('[data-test="log"]').scrollTop = 0, ${topLine})`);
  await page.waitFor(hasLine('999000'), 5000, 'line 999000 after scrolling to the top');
  await settle(page);
  assert.is(await page.evaluate<string>(topLine), before, 'the line at the top stays in place');
  const pagedRows = await page.evaluate<number>(rows);

  // Search on the server: the only match, shown in its context, counted.
  const count = `document.querySelector('[data-test="log-match-count"]').textContent`;
  await page.fill('[data-test="log-search"]', '424242');
  await page.waitFor(`document.querySelector('.log-hit')?.textContent === '424242'`, 10_000, 'the match 424242 shown');
  assert.ok(await page.evaluate(`${hasLine('424241')} && ${hasLine('424243')}`), 'the match is shown among the lines around it');
  assert.is(await page.evaluate(count), '1 of 1');
  assert.ok(await page.evaluate(`(() => { const log = document.querySelector('[data-test="log"]').getBoundingClientRect(); const hit = document.querySelector('.log-hit').getBoundingClientRect(); return hit.top >= log.top && hit.bottom <= log.bottom; })()`), 'the match is in view');
  await shoot(page, 'run-log-search');
  await shootPhone(page, 'run-log-search', '.run-pane');
  // Earlier and later matches, counted: the server holds all 299 lines with 4242. The first is
  // shown first; the previous of the first is the last (as in a browser).
  await page.fill('[data-test="log-search"]', '4242');
  await page.waitFor(`${count} === '1 of 299' && document.querySelector('.log-hit')?.textContent === '4242'`, 10_000, 'the first of 299 matches');
  await page.click('[data-test="log-match-earlier"]');
  await page.waitFor(`${count} === '299 of 299' && document.querySelector('.log-hit')?.textContent === '994242'`, 10_000, 'the last match, before the first');
  await page.click('[data-test="log-match-later"]');
  await page.waitFor(`${count} === '1 of 299' && document.querySelector('.log-hit')?.textContent === '4242'`, 10_000, 'the first match again');

  // The download: the whole log as text, with the page's own cookie.
  const href = await page.evaluate<string>(`document.querySelector('[data-test="log-download"]').href`);
  assert.match(href, new RegExp(`/api/log/${run.id}/count/1$`));
  const download = await page.evaluate<{ status: number; lines: number; first: string }>(`fetch(${JSON.stringify(href)}).then(async (answer) => { const text = await answer.text(); return { status: answer.status, lines: text.split('\\n').length - 1, first: text.slice(0, 200) }; })`);
  assert.is(download.status, 200);
  assert.is(download.lines, total, `the download has every line of the log (${total}, the 1,000,000 and Factory's own): ${download.first}`);
  assert.ok(total >= 1_000_000 && total < 1_000_020, `${total} lines: 1,000,000 and a few of Factory's own`);

  const heap = await page.evaluate<number>(`performance.memory ? Math.round(performance.memory.usedJSHeapSize / 1048576) : -1`);
  console.log(`  1,000,000-line log: live at most ${liveRows} rows, marker ${JSON.stringify(liveMarker)}; tail with ${tailRows} rows; ${pagedRows} rows after one page; JS heap ${heap} MB`);
  assert.ok(tailRows <= 1000 && pagedRows <= 2000 && liveRows <= 5000, `rows: tail ${tailRows}, paged ${pagedRows}, live ${liveRows} (limits 1,000, 2,000, 5,000)`);
});

ui('a burst of new runs keeps the Runs list to the latest 300, newest first', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  const pipeline = await call('savePipeline', { projectId: project.id, name: 'Burst', variables: {}, steps: [{ id: 'gate', name: 'Gate', kind: 'approval', message: 'Go?' }] });
  await show(page, '#/runs');
  let last = '';
  for (let batch = 0; batch < 20; batch++) {
    await Promise.all(Array.from({ length: 20 }, (_, index) => call('startRun', { pipelineId: pipeline.id, issue: { title: `Burst ${batch * 20 + index}` } })));
  }
  last = (await call('listRuns', { pipelineId: pipeline.id, limit: 1 }))[0].id;
  await page.waitFor(`document.querySelector('[data-test="run-row"]')?.dataset.runId === ${JSON.stringify(last)}`, 10_000, 'the newest run at the top');
  await settle(page);
  assert.is(await page.evaluate<number>(`document.querySelectorAll('[data-test="run-row"]').length`), 300);
});

ui('the page talked only to its own origin and logged no errors', async () => {
  const { page, origin } = need();
  const foreign = page.problems.requests.filter((url) => !url.startsWith(`${origin}/`) && url !== origin && !/^(data|blob):/.test(url) && url !== 'about:blank');
  assert.equal(foreign, [], `requests to other origins:\n${foreign.join('\n')}`);
  const errors = page.problems.errors.filter((error) => !(error.source === 'network' && expectedFailedRequests.some((part) => error.url?.includes(part))));
  assert.equal(errors.map((error) => error.text), [], `console errors and exceptions:\n${errors.map((error) => error.text).join('\n')}`);
  console.log(`  ${page.problems.requests.length} requests, all to ${origin}`);
});

ui.run();
