// Runner validation (core/runners.ts): every bad input refused in words, with its field path beside.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidationError } from '../../src/core/errors';
import { allRunners, readRunnerId, validateRunner, type RunnerContext } from '../../src/core/runners';

const runners = suite('runners');
const none: RunnerContext = { otherNames: [] };

/** The problems validateRunner reports for `input`, as field → message. */
function problems(input: unknown, context: RunnerContext = none): Record<string, string> {
  try {
    validateRunner(input, context);
  } catch (error) {
    assert.instance(error, ValidationError);
    return Object.fromEntries((error as ValidationError).issues.map((issue) => [issue.field, issue.message]));
  }
  return {};
}

runners('a sandbox and an ssh runner come back clean, fields of the other kind dropped', () => {
  assert.equal(validateRunner({ name: ' Box ', kind: 'sandbox', network: false, host: 'dropped', extra: 1 }, none), { name: 'Box', kind: 'sandbox', network: false });
  assert.equal(
    validateRunner({ name: 'Build', kind: 'ssh', host: 'build.example.com', port: 2222, user: 'ci', identityFile: '/home/me/.ssh/id', knownHosts: 'accept-new', workDir: '/srv/factory', maxParallelRuns: 3, network: false }, none),
    { name: 'Build', kind: 'ssh', host: 'build.example.com', port: 2222, user: 'ci', identityFile: '/home/me/.ssh/id', knownHosts: 'accept-new', workDir: '/srv/factory', maxParallelRuns: 3 },
  );
});

runners('an unknown kind is refused in words', () => {
  assert.match(problems({ name: 'X', kind: 'kubernetes' }).kind!, 'The kind must be sandbox or ssh, not `kubernetes`');
  assert.match(problems({ name: 'X' }).kind!, 'The kind must be sandbox or ssh');
  assert.match(problems({ name: 'X', kind: 'local' }).kind!, 'built in');
});

runners('an ssh runner needs a host, and the host cannot pass for an ssh option', () => {
  assert.match(problems({ name: 'X', kind: 'ssh' }).host!, 'The host is empty');
  assert.match(problems({ name: 'X', kind: 'ssh', host: '-oProxyCommand=touch /tmp/x' }).host!, 'must be a host name or an IP address');
  assert.match(problems({ name: 'X', kind: 'ssh', host: 'h', user: '-oX' }).user!, 'login name');
});

runners('a port out of range is refused', () => {
  assert.match(problems({ name: 'X', kind: 'ssh', host: 'h', port: 0 }).port!, 'The port must be a whole number from 1 to 65535, not `0`');
  assert.match(problems({ name: 'X', kind: 'ssh', host: 'h', port: 65536 }).port!, 'from 1 to 65535');
  assert.equal(problems({ name: 'X', kind: 'ssh', host: 'h', port: 65535 }), {});
});

runners('a workDir or identity file that is not absolute is refused', () => {
  assert.match(problems({ name: 'X', kind: 'ssh', host: 'h', workDir: 'work' }).workDir!, 'The work folder must be an absolute path');
  assert.match(problems({ name: 'X', kind: 'ssh', host: 'h', workDir: '/srv/a\nb' }).workDir!, 'control character');
  assert.match(problems({ name: 'X', kind: 'ssh', host: 'h', identityFile: '~/.ssh/id' }).identityFile!, 'The identity file must be an absolute path');
  assert.match(problems({ name: 'X', kind: 'ssh', host: 'h', knownHosts: 'off' }).knownHosts!, 'strict or accept-new');
});

runners('name rules: required, at most 100 characters, not taken in any letter case', () => {
  assert.match(problems({ kind: 'sandbox' }).name!, 'The name is empty');
  assert.match(problems({ name: 'x'.repeat(101), kind: 'sandbox' }).name!, 'the most is 100');
  assert.match(problems({ name: 'build box', kind: 'sandbox' }, { otherNames: ['Build Box'] }).name!, 'taken by another runner');
});

runners('the built-in local runner cannot be changed, and other ids must be runner ids', () => {
  assert.match(problems({ id: 'local', name: 'Mine', kind: 'sandbox' }).id!, 'built in');
  assert.match(problems({ id: 'prj_0123456789abcdef', name: 'X', kind: 'sandbox' }).id!, 'not a runner id');
  assert.equal(validateRunner({ id: 'rnr_0123456789abcdef', name: 'X', kind: 'sandbox' }, none).id, 'rnr_0123456789abcdef');
});

runners('every message is in words; the paths stay beside them', () => {
  try {
    validateRunner({ name: '', kind: 'ssh', port: 'x', workDir: 'rel' }, none);
    assert.unreachable();
  } catch (error) {
    const message = (error as Error).message;
    assert.match(message, /^Runner not saved:\n/);
    for (const line of message.split('\n').slice(1)) assert.match(line, /^The /);
    assert.equal((error as ValidationError).issues.map((issue) => issue.field).sort(), ['host', 'name', 'port', 'workDir']);
  }
});

runners('runnerId on a project, pipeline or trigger is local or an rnr_ id', () => {
  const issues: { field: string; message: string }[] = [];
  assert.is(readRunnerId({ runnerId: 'local' }, 'runnerId', issues), 'local');
  assert.is(readRunnerId({}, 'runnerId', issues), undefined);
  assert.is(readRunnerId({ runnerId: '../x' }, 'runnerId', issues), undefined);
  assert.is(issues.length, 1);
  assert.match(issues[0]!.message, 'The runner must be');
});

runners('the snapshot lists local first', () => {
  assert.equal(allRunners([{ id: 'rnr_0123456789abcdef', name: 'B', kind: 'sandbox' }]).map((runner) => runner.id), ['local', 'rnr_0123456789abcdef']);
});

runners.run();
