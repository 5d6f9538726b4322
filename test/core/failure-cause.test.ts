// The cause of a failed step: the log line most likely to say why (core/failure-cause.ts).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogLine } from '../../src/core/api';
import { findFailureCause, maxCauseLength } from '../../src/core/failure-cause';

const cause = suite('failure cause');

/** Numbered lines from text: `! ` marks stderr, `# ` Factory's own (info) lines, the rest stdout. */
function log(...texts: string[]): Pick<LogLine, 'line' | 'n' | 'stream'>[] {
  return texts.map((text, index) => {
    const stream = text.startsWith('! ') ? 'err' : text.startsWith('# ') ? 'info' : 'out';
    return { n: index + 1, line: stream === 'out' ? text : text.slice(2), stream };
  });
}

cause('npm: the line that says what could not be done, not the first that says "error"', () => {
  const lines = log(
    '# $ npm test',
    '! npm error code ENOENT',
    '! npm error syscall open',
    '! npm error path /work/demo/package.json',
    '! npm error errno -2',
    '! npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, open \'/work/demo/package.json\'',
    '! npm error enoent This is related to npm not being able to find a file.',
    '! npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log',
    '# Exited with code 254: npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log',
  );
  assert.equal(findFailureCause(lines), { line: 6, text: 'npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, open \'/work/demo/package.json\'' });
});

cause('without a telling word, the first line that says error or failed', () => {
  assert.equal(findFailureCause(log('# $ make', 'building', '! make: *** [all] Error 2', 'FAILED again')), { line: 3, text: 'make: *** [all] Error 2' });
  assert.equal(findFailureCause(log('ok 1', 'not ok 2 - sums', 'tests 2, failed 1')), { line: 3, text: 'tests 2, failed 1' });
});

cause('the agent\'s own error, as the step\'s error quotes it, before any earlier error-looking line', () => {
  const lines = log('# $ claude -p …', 'Reading the file', '! warning: could not find .clauderc', 'tool: Bash cannot run here', '! error: Credit balance is too low', 'Done');
  assert.equal(findFailureCause(lines, 'Claude reported an error: Credit balance is too low'), { line: 5, text: 'error: Credit balance is too low' });
  // Without the step's error quoting it, the first telling line.
  assert.equal(findFailureCause(lines), { line: 4, text: 'tool: Bash cannot run here' });
  // An `error:` line on stdout is output, not a report.
  assert.equal(findFailureCause(log('error: Credit balance is too low', '! fatal: no'), 'Claude failed: Credit balance is too low'), { line: 2, text: 'fatal: no' });
});

cause('Factory\'s own lines, warnings, notes and counts of none are never the cause', () => {
  assert.is(findFailureCause(log('# $ echo failed', '# Exited with code 1: failed', 'WARN could not resolve peer', 'warning: cannot stat', '0 errors, 0 failed', 'Errors: 0', 'no failures')), undefined);
  assert.is(findFailureCause([]), undefined);
});

cause('lines without a number (a page\'s marker) are passed over; colour codes go; long lines are cut', () => {
  const long = `\u001b[31mError: ${'x'.repeat(400)}\u001b[0m`;
  const found = findFailureCause([{ line: '… 12 earlier lines holding error', stream: 'info', skipped: 12 } as LogLine, { n: 13, line: 'fine', stream: 'out' }, { n: 14, line: long, stream: 'err' }]);
  assert.is(found?.line, 14);
  assert.is(found?.text.length, maxCauseLength);
  assert.ok(found?.text.startsWith('Error: xxx') && found.text.endsWith('…'), found?.text);
});

cause('a traceback is named at its first line; "not found" and "denied" are telling', () => {
  assert.is(findFailureCause(log('collecting', 'Traceback (most recent call last):', '  File "x.py", line 1', 'ValueError: bad'))?.line, 2);
  assert.is(findFailureCause(log('error summary follows', 'sh: 1: jest: not found'))?.line, 2);
  assert.is(findFailureCause(log('push failed', 'remote: Permission to x denied to bot'))?.line, 2);
});

cause.run();
