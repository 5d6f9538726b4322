// The shared parts of the end-to-end suites: the headless server (dist/server.js) as a child
// process, Chromium over the DevTools pipe, and small steps a test takes on the page. Each suite
// file starts its own session, so suites can be written (and run) side by side.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'uvu';
import { freePort, send } from '../helpers/net';
import { makeTempDir, removeTempDir } from '../helpers/temp';
import { Browser, findChromium, type Page } from './chromium';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const screenshots = join(root, 'test-output', 'screenshots');

/** A running server and a browser page (not signed in yet: open `link`). */
export interface Session {
  server: ChildProcess;
  dataDir: string;
  origin: string;
  link: string;
  token: string;
  browser: Browser;
  page: Page;
}

/** Starts a server on a fresh data folder and a browser; everything started is stopped again on failure. */
export async function startSession(): Promise<Session> {
  const dataDir = makeTempDir('factory-e2e');
  let server: ChildProcess | undefined;
  let browser: Browser | undefined;
  try {
    findChromium(); // before anything else: the install hint is the failure when it is missing
    const started = await startServer(dataDir, await freePort());
    server = started.server;
    const url = new URL(started.link);
    browser = await Browser.launch();
    const page = await browser.newPage();
    await page.viewport('desktop');
    await page.colorScheme('light');
    return { server, dataDir, origin: url.origin, link: started.link, token: url.searchParams.get('t') ?? '', browser, page };
  } catch (error) {
    if (browser) await browser.close().catch(() => undefined);
    if (server) await stopServer(server).catch(() => undefined);
    removeTempDir(dataDir);
    throw error;
  }
}

export async function stopSession(session: Session): Promise<void> {
  try {
    await session.browser.close();
  } finally {
    await stopServer(session.server);
    removeTempDir(session.dataDir);
  }
}

/**
 * The session of a suite file: started in the suite's `before` hook, then `setUp` (sign in, answer
 * dialogs…), and stopped in its `after` hook. A failed start is kept, and `need()` throws it in each
 * test, so every test fails with the reason. Under suiteNeeding with Chromium missing the hooks never
 * run and the tests are skipped (test/helpers/tools.ts).
 */
export function suiteSession(test: Test, setUp?: (session: Session) => Promise<void>) {
  let session: Session | undefined;
  let setupError: unknown;
  const need = (): Session => {
    if (!session) throw setupError instanceof Error ? setupError : new Error(`setup failed: ${String(setupError)}`);
    return session;
  };
  test.before(async () => {
    try {
      session = await startSession();
      await setUp?.(session);
    } catch (error) {
      setupError = error;
    }
  });
  test.after(async () => {
    if (session) await stopSession(session);
    session = undefined;
  });
  return {
    need,
    /** One API call as the session's user. */
    call: <T = any>(method: string, ...args: unknown[]) => callAs<T>(need(), method, ...args),
    waitForRun: (id: string, statuses: string[], timeoutMs?: number) => waitForRunAs(need(), id, statuses, timeoutMs),
  };
}

/** Opens the sign-in link and waits for the app. */
export async function signIn(session: Session): Promise<void> {
  await session.page.goto(session.link);
  await session.page.waitFor(`document.querySelector('.nav-link[aria-current="page"]')?.textContent`, 10_000, 'the sidebar');
}

/** Starts dist/server.js and resolves with its `Remote access: <link>` line. */
export async function startServer(dataDir: string, port: number): Promise<{ server: ChildProcess; link: string }> {
  // FACTORY_E2E_DIST: an app built elsewhere (several checkouts or agents sharing one dist/).
  const dist = process.env.FACTORY_E2E_DIST || join(root, 'dist');
  const serverJs = join(dist, 'server.js');
  if (!existsSync(serverJs) || !existsSync(join(dist, 'ui', 'app.js'))) throw new Error(`${dist} is missing the app: run \`node build.mjs --tests\` first`);
  const server = spawn(process.execPath, [serverJs, '--data', dataDir, '--remote-port', String(port)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let output = '';
  const link = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server printed no "Remote access:" line within 15 s:\n${output}`)), 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /^Remote access: (\S+)/m.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before remote access was up:\n${output}`));
    });
  });
  return { server, link };
}

export async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  server.kill('SIGTERM');
  const timer = setTimeout(() => server.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** One API call from Node with the Bearer token; throws the server's error. */
export async function callAs<T = any>(session: Pick<Session, 'origin' | 'token'>, method: string, ...args: unknown[]): Promise<T> {
  const { origin, token } = session;
  const answer = await send(`${origin}/api/call/${method}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(args),
  });
  if (answer.status !== 200) throw new Error(`${method}: HTTP ${answer.status} ${answer.text}`);
  return answer.json().result as T;
}

export async function waitForRunAs(session: Pick<Session, 'origin' | 'token'>, id: string, statuses: string[], timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await callAs(session, 'getRun', id);
    if (statuses.includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run ${id} is ${run.status}, not ${statuses.join('/')}, after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Two animation frames: the state's batched re-render and the paint after it. */
export const settle = (page: Page) => page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))');

export async function show(page: Page, hash: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await page.waitFor(`location.hash === ${JSON.stringify(hash)} && document.querySelector('#main') && document.querySelector('#main').children.length > 0`, 5000, `the screen ${hash}`);
  await settle(page);
}

export async function shoot(page: Page, name: string, schemes: ('light' | 'dark')[] = ['light', 'dark']): Promise<void> {
  for (const scheme of schemes) {
    await page.colorScheme(scheme);
    await settle(page);
    await page.screenshot(join(screenshots, `${name}-${scheme}.png`));
  }
  await page.colorScheme('light');
}

/** A phone-width screenshot; `scrollTo` (a selector) is scrolled to the top first. */
export async function shootPhone(page: Page, name: string, scrollTo?: string): Promise<void> {
  await page.viewport('phone');
  await page.colorScheme('light');
  await page.waitFor(`innerWidth === 390 && matchMedia('(prefers-color-scheme: light)').matches`, 5000, 'the phone viewport (390 px wide, light)');
  if (scrollTo) await page.evaluate(`document.querySelector(${JSON.stringify(scrollTo)})?.scrollIntoView({ block: 'start' })`);
  await settle(page);
  await page.screenshot(join(screenshots, `${name}-phone.png`));
  await page.viewport('desktop');
  await page.waitFor('innerWidth === 1280', 5000, 'the desktop viewport (1280 px wide)');
  await settle(page);
}

/** Phone screenshots, light and dark (`<name>-phone-light.png`, `<name>-phone-dark.png`), of what the page shows now. */
export async function shootPhoneBoth(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.colorScheme(scheme);
    await settle(page);
    await page.screenshot(join(screenshots, `${name}-phone-${scheme}.png`));
  }
  await page.colorScheme('light');
}

/**
 * Screenshots at 1280×800 and 390×844, light and dark (`<name>-light.png`, `-dark`, `-phone-light`,
 * `-phone-dark`), after `prepare` (a script) in each; throws when the page is wider than the viewport.
 */
export async function shootSizes(page: Page, name: string, prepare?: string): Promise<void> {
  for (const kind of ['desktop', 'phone'] as const) {
    await page.viewport(kind);
    for (const scheme of ['light', 'dark'] as const) {
      await page.colorScheme(scheme);
      await page.waitFor(`innerWidth === ${kind === 'phone' ? 390 : 1280} && matchMedia('(prefers-color-scheme: ${scheme})').matches`, 5000, `the ${kind} viewport, ${scheme}`);
      if (prepare) await page.evaluate(prepare);
      await settle(page);
      const widths = await page.evaluate<[number, number]>('[document.documentElement.scrollWidth, innerWidth]');
      if (widths[0] > widths[1]) throw new Error(`${name}: the page is ${widths[0]} px wide on a ${kind} ${widths[1]} px wide (${scheme})`);
      await page.screenshot(join(screenshots, `${name}-${kind === 'phone' ? 'phone-' : ''}${scheme}.png`));
    }
  }
  await page.viewport('desktop');
  await page.colorScheme('light');
  await settle(page);
}

/** Removes the toasts shown now, so that screenshots do not depend on their timing. */
export const clearToasts = `document.querySelectorAll('.toast').forEach((toast) => toast.remove())`;

export const mainText = (page: Page) => page.evaluate<string>(`document.querySelector('#main')?.innerText ?? ''`);

/** Sets the control of the field labelled `label` (a `label.form-field`) inside `scope`, as typing would. */
export async function fillField(page: Page, scope: string, label: string, value: string): Promise<void> {
  const filled = await page.evaluate<boolean>(`(() => {
    const field = [...document.querySelectorAll(${JSON.stringify(`${scope} label.form-field`)})].find((element) => element.firstElementChild?.textContent === ${JSON.stringify(label)});
    const control = field?.querySelector('input, select, textarea');
    if (!control) return false;
    control.focus();
    control.value = ${JSON.stringify(value)};
    control.dispatchEvent(new Event('input', { bubbles: true }));
    control.dispatchEvent(new Event('change', { bubbles: true }));
    return true;
  })()`);
  if (!filled) throw new Error(`No field labelled ${label} in ${scope}`);
}

/** Clicks the button inside `scope` whose text is `text`. */
export async function clickButton(page: Page, scope: string, text: string): Promise<void> {
  const clicked = await page.evaluate<boolean>(`(() => {
    const button = [...document.querySelectorAll(${JSON.stringify(`${scope} button`)})].find((element) => element.textContent.trim() === ${JSON.stringify(text)} && !element.hidden);
    button?.click();
    return Boolean(button);
  })()`);
  if (!clicked) throw new Error(`No button ${text} in ${scope}`);
}

/**
 * Answers every confirmation dialog of the app (ui/views/dialog.ts) with its confirming button,
 * keeping each question (title and body, as one line) in `window.__confirms`. Evaluate it after
 * the page loads; a reload forgets it.
 */
export const answerDialogsYes = `(() => {
  window.__confirms = [];
  new MutationObserver(() => {
    const dialog = document.querySelector('dialog.dialog[open]');
    if (!dialog) return;
    window.__confirms.push([dialog.querySelector('h2'), dialog.querySelector('p')].filter(Boolean).map((element) => element.textContent).join(' '));
    dialog.querySelector('[data-test="dialog-confirm"]').click();
  }).observe(document.body, { childList: true });
})()`;
