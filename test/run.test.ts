// The test runner on a machine without the system tools (zbarimg, rsvg-convert, Chromium): the QR
// and end-to-end files run with a PATH that has none of them. Outside CI their tests are skipped,
// with what to install, and counted; with CI=true they fail. The totals stay the last line.
import { spawn } from 'node:child_process';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeTempDir, removeTempDir } from './helpers/temp';

const root = fileURLToPath(new URL('../', import.meta.url));
/** Where this file was compiled to: the runner below reads the same folder. */
const testOut = relative(root, dirname(fileURLToPath(import.meta.url)));

const runner = suite<{ emptyPath: string }>('test runner without system tools');

runner.before((context) => {
  context.emptyPath = makeTempDir('factory-empty-path');
});

runner.after((context) => {
  removeTempDir(context.emptyPath);
});

/** Runs test/run.mjs on the QR and end-to-end files with a PATH holding nothing; its output lines and exit code. */
function runWithoutTools(emptyPath: string, extra: Record<string, string>): Promise<{ lines: string[]; code: number | null }> {
  return new Promise((resolve, reject) => {
    const environment: Record<string, string> = { PATH: emptyPath, TEST_OUT: testOut, HOME: process.env.HOME ?? root, ...extra };
    const child = spawn(process.execPath, ['test/run.mjs', 'core/qr.test', 'e2e/ui.test'], { cwd: root, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ lines: output.trimEnd().split('\n'), code }));
  });
}

runner('outside CI the tests that need a missing tool are skipped, each tool named with its package', async ({ emptyPath }) => {
  const { lines, code } = await runWithoutTools(emptyPath, {});
  const output = lines.join('\n');
  assert.is(code, 0, output);
  assert.match(lines.at(-1)!, /^\d+ passed, 0 failed, \d+ skipped$/, output);
  for (const need of ['zbarimg (apt-get install zbar-tools)', 'rsvg-convert (apt-get install librsvg2-bin)', 'chromium (apt-get install chromium)']) {
    assert.ok(lines.includes(`  skipped: needs ${need}`), `the summary names ${need}\n${output}`);
  }
  assert.match(output, /── ok core\/qr\.test\.mjs \(\d+ passed, 0 failed, 6 skipped/);
  const e2eSkipped = Number(/── ok e2e\/ui\.test\.mjs \(0 passed, 0 failed, (\d+) skipped/.exec(output)?.[1] ?? 0);
  assert.ok(e2eSkipped > 0, `every end-to-end test is skipped\n${output}`);
  assert.is(lines.at(-1)!.replace(/^\d+ passed, /, ''), `0 failed, ${6 + e2eSkipped} skipped`, 'the totals count each skipped test');
});

runner('with CI=true a missing tool fails the tests that need it', async ({ emptyPath }) => {
  const { lines, code } = await runWithoutTools(emptyPath, { CI: 'true' });
  const output = lines.join('\n');
  assert.is(code, 1, output);
  assert.match(lines.at(-1)!, /^\d+ passed, [1-9]\d* failed$/, output);
  assert.match(output, /missing `zbarimg` and `rsvg-convert`: needs zbarimg \(apt-get install zbar-tools\), needs rsvg-convert/);
  assert.match(output, /missing `chromium`: needs chromium \(apt-get install chromium\)/);
  assert.not.match(output, /^skipped:/m);
});

runner.run();
