// End to end: a failure points at its cause (issue 28.6), and a script is echoed line by line
// (issue 28.7), on a desktop (1280×800) and a phone (390×844), light and dark. The banner of a
// failed run says "Likely cause · line N" with the line, not the last stderr line; the link shows
// that line of the log, highlighted, and the address links to it. The demo's Report step shows
// its two echo lines as two lines.
// Screenshots under test-output/screenshots/failure-cause-*.png.
// Needs `node build.mjs --tests` first, and chromium on PATH (skipped without it, failed under CI).

import * as assert from 'uvu/assert';
import { suiteNeeding } from '../helpers/tools';
import { chromium } from './chromium';
import { clearToasts, shootSizes, show, signIn, suiteSession } from './session';

const failure = suiteNeeding('failure cause (Chromium)', [chromium]);
const { need, call, waitForRun } = suiteSession(failure, signIn);

/** What npm 10 prints without a package.json, then 30 lines of its debug log's tail, without needing npm. */
const npmTest = [
  'echo "> demo@1.0.0 test"',
  ...[
    'npm error code ENOENT',
    'npm error syscall open',
    'npm error path /work/demo/package.json',
    'npm error errno -2',
    "npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, open '/work/demo/package.json'",
    'npm error enoent This is related to npm not being able to find a file.',
  ].map((line) => `echo "${line}" >&2`),
  'for n in $(seq 1 30); do echo "npm verbose exit $n"; done',
  'echo "npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T00_00_00_000Z-debug-0.log" >&2',
  'exit 254',
].join('\n');

failure('Chromium is installed and the server and browser start', () => {
  need();
});

failure('the banner names the likely cause; its link shows that line of the log, highlighted, and the address links to it', async () => {
  const { page } = need();
  const project = (await call('snapshot')).projects[0];
  const pipeline = await call('savePipeline', { projectId: project.id, name: 'Feature', variables: {}, steps: [{ id: 'test', name: 'Run the tests', kind: 'shell', command: `npm_test() {\n${npmTest}\n}\nnpm_test` }] });
  const run = await call('startRun', { pipelineId: pipeline.id, issue: { title: 'Add a dark mode', key: 'WEB-9' } });
  const failed = await waitForRun(run.id, ['failed']);
  const cause = failed.steps[0].cause;
  assert.ok(cause, 'the engine recorded a cause');
  assert.match(cause.text, /Could not read package\.json/);

  await show(page, `#/runs/${run.id}`);
  await page.waitFor(`document.querySelector('[data-test="failure-cause"]')`, 10_000, 'the cause in the banner');
  const banner = await page.evaluate<string>(`document.querySelector('[data-test="run-error"]').innerText`);
  assert.match(banner, /“Run the tests” failed: exited with code 254\./);
  assert.match(banner, new RegExp(`Likely cause · line ${cause.line}`));
  assert.match(banner, /Could not read package\.json/);
  assert.not.match(banner, /A complete log/, 'not the last stderr line');
  assert.is(await page.evaluate(`document.querySelector('[data-test="failure-cause"]').getAttribute('href')`), `#/runs/${run.id}?step=test&attempt=1#L${cause.line}`);
  // The failed step's log is shown at its tail; the cause line is marked wherever it is shown.
  await page.evaluate(clearToasts);
  await shootSizes(page, 'failure-cause-banner');

  await page.click('[data-test="failure-cause"]');
  const row = `document.querySelector('.log-line[data-n="${cause.line}"]')`;
  await page.waitFor(`${row}?.classList.contains('log-target')`, 5000, 'the cause line, linked');
  assert.ok(await page.evaluate(`${row}.classList.contains('log-cause')`), 'highlighted as the cause');
  assert.is(await page.evaluate(`${row}.textContent`), cause.text);
  assert.ok(await page.evaluate(`(() => { const log = document.querySelector('[data-test="log"]').getBoundingClientRect(); const line = ${row}.getBoundingClientRect(); return line.top >= log.top && line.bottom <= log.bottom; })()`), 'the line is in view');
  assert.is(await page.evaluate(`location.hash`), `#/runs/${run.id}?step=test&attempt=1#L${cause.line}`);
  assert.is(await page.evaluate(`document.querySelectorAll('.log-cause').length`), 1, 'one line is the cause');
  await shootSizes(page, 'failure-cause-line', `document.querySelector('.log-line[data-n="${cause.line}"]').scrollIntoView({ block: 'center' })`);

  // The address opens the same line on a fresh page.
  await show(page, '#/runs');
  await page.evaluate(`location.hash = ${JSON.stringify(`#/runs/${run.id}?step=test&attempt=1#L${cause.line}`)}`);
  await page.waitFor(`${row}?.classList.contains('log-target') && ${row}.classList.contains('log-cause')`, 10_000, 'the cause line from the address');
});

failure('the demo\'s Report step shows its script line by line', async () => {
  const { page } = need();
  const demo = (await call('snapshot')).pipelines.find((pipeline: { name: string }) => pipeline.name === 'Demo');
  const run = await call('startRun', { pipelineId: demo.id, issue: { title: 'Try Factory' } });
  const waiting = await waitForRun(run.id, ['waiting']);
  const choose = waiting.steps.find((step: { kind: string }) => step.kind === 'approval');
  await call('approveStep', run.id, choose.id, true, undefined, ['1']);
  await waitForRun(run.id, ['succeeded']);
  await show(page, `#/runs/${run.id}`);
  const lines = `[...document.querySelectorAll('[data-test="log"] .log-line')].map((row) => row.textContent)`;
  await page.waitFor(`${lines}.some((text) => text.startsWith('You chose'))`, 10_000, 'the Report log');
  const shown = await page.evaluate<string[]>(lines);
  const echo = shown.indexOf('$ echo "You chose: Ship it"');
  assert.ok(echo >= 0, `the first line of the script, as a line of its own: ${JSON.stringify(shown)}`);
  assert.is(shown[echo + 1], '  echo "Your comment: "', 'the second line of the script on the next line');
  assert.ok(await page.evaluate(`document.querySelectorAll('[data-test="log"] .log-line.info')[1]?.textContent === '  echo "Your comment: "'`), 'both are Factory\'s own lines');
  await page.evaluate(clearToasts);
  await shootSizes(page, 'failure-cause-echo');
});

failure.run();
