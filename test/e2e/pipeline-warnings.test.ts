// End to end: the pipeline editor shows what saving would warn about, in amber at the field, when
// the pipeline opens, after a save and when a field loses focus; a placeholder where the shell runs
// text as code is a field error. The headless server (dist/server.js, dist/ui) driven through
// Debian's Chromium. Needs `node build.mjs --tests` first; skipped when Chromium is missing.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort, send } from '../helpers/net';
import { makeTempDir, removeTempDir } from '../helpers/temp';
import { Browser, findChromium, type Page } from './chromium';

const root = fileURLToPath(new URL('../../', import.meta.url));
const hasChromium = (() => {
  try {
    return Boolean(findChromium());
  } catch {
    return false;
  }
})();

interface Env {
  server: ChildProcess;
  dataDir: string;
  origin: string;
  token: string;
  browser: Browser;
  page: Page;
}

let env: Env | undefined;

async function startServer(dataDir: string, port: number): Promise<{ server: ChildProcess; link: string }> {
  const serverJs = join(root, 'dist', 'server.js');
  if (!existsSync(serverJs)) throw new Error('dist/ is missing: run `node build.mjs --tests` first');
  const server = spawn(process.execPath, [serverJs, '--data', dataDir, '--remote-port', String(port)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let output = '';
  const link = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "Remote access:" line within 15 s:\n${output}`)), 15_000);
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
      reject(new Error(`the server exited (${code}):\n${output}`));
    });
  });
  return { server, link };
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  server.kill('SIGTERM');
  const timer = setTimeout(() => server.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function call<T = any>(method: string, ...args: unknown[]): Promise<T> {
  const { origin, token } = env!;
  const answer = await send(`${origin}/api/call/${method}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(args),
  });
  if (answer.status !== 200) throw new Error(`${method}: HTTP ${answer.status} ${answer.text}`);
  return answer.json().result as T;
}

/** The texts of the warnings (or errors) shown in the command field of the first step card. */
function commandMessages(page: Page, kind: 'field-warning' | 'field-error'): Promise<string[]> {
  return page.evaluate<string[]>(`[...document.querySelectorAll('.step-card [data-field="command"] [data-test="${kind}"]')].map((element) => element.textContent)`);
}

async function setCommand(page: Page, command: string): Promise<void> {
  await page.fill('[data-test="step-command"]', command);
  await page.evaluate(`document.querySelector('[data-test="step-command"]').blur()`);
}

const editor = suite('pipeline editor warnings (Chromium)');

editor.before(async () => {
  if (!hasChromium) return;
  const dataDir = makeTempDir('factory-e2e-warnings');
  const started = await startServer(dataDir, await freePort());
  const url = new URL(started.link);
  const browser = await Browser.launch();
  const page = await browser.newPage();
  await page.viewport('desktop');
  await page.goto(started.link);
  await page.waitFor(`location.pathname === '/' && document.querySelector('#main')`, 10_000, 'the signed-in app');
  env = { server: started.server, dataDir, origin: url.origin, token: url.searchParams.get('t') ?? '', browser, page };
});

editor.after(async () => {
  if (!env) return;
  try {
    await env.browser.close();
  } finally {
    await stopServer(env.server);
    removeTempDir(env.dataDir);
  }
});

editor('a warning is shown at the command when the pipeline opens, after a blur and after a save; a code place is a field error', async () => {
  if (!env) return;
  const { page } = env;
  const projectId = (await call('snapshot')).projects[0].id;
  const pipeline = await call('savePipeline', { projectId, name: 'Nested shell', variables: {}, steps: [{ id: 'build', name: 'Build', kind: 'shell', command: 'sh -c "make {{issue.title}}"' }] });
  await page.evaluate(`location.hash = ${JSON.stringify(`#/pipelines/${pipeline.id}`)}`);
  await page.waitFor(`document.querySelector('[data-test="step-command"]')`, 5000, 'the editor');

  // On opening.
  await page.waitFor(`document.querySelector('[data-test="field-warning"]')`, 5000, 'a warning when the pipeline opens');
  const opened = await commandMessages(page, 'field-warning');
  assert.is(opened.length, 1);
  assert.match(opened[0]!, 'is parsed as code again by `sh -c`');
  const colour = await page.evaluate<string[]>(`[getComputedStyle(document.querySelector('[data-test="field-warning"]')).color, getComputedStyle(document.querySelector('.field-error, .dirty-note') ?? document.body).color]`);
  assert.ok(colour[0] !== 'rgb(0, 0, 0)', `the warning is coloured: ${colour[0]}`);
  await page.evaluate(`document.querySelector('[data-test="field-warning"]').scrollIntoView({ block: 'center' })`);
  await page.screenshot(join(root, 'test-output', 'screenshots', 'editor-warning-light.png'));
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
