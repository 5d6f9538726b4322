// Which runner a run uses, and why (core/runner-choice.ts): the trigger's, the pipeline's, the
// project's, else local; an untrusted trigger (a generic webhook without a secret) goes sandboxed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Runner } from '../../src/core/api';
import { chooseRunner, isUntrustedTrigger } from '../../src/core/runner-choice';

const choice = suite('runner choice');
const box: Runner = { id: 'rnr_box0000000000000', name: 'Box', kind: 'sandbox' };
const far: Runner = { id: 'rnr_far0000000000000', name: 'Far', kind: 'ssh', host: 'build' };

choice('the trigger names it, else the pipeline, else the project, else this computer', () => {
  const runners = [far, box];
  assert.equal(chooseRunner({ trigger: { kind: 'github', runnerId: box.id }, pipeline: { runnerId: far.id }, project: { runnerId: far.id }, runners }).runnerId, box.id);
  assert.equal(chooseRunner({ pipeline: { runnerId: far.id }, project: { runnerId: box.id }, runners }).runnerId, far.id);
  assert.equal(chooseRunner({ pipeline: {}, project: { runnerId: box.id }, runners }).runnerId, box.id);
  assert.equal(chooseRunner({ pipeline: {}, project: {}, runners }), { runnerId: 'local', reason: 'neither the trigger, the pipeline nor the project names one' });
});

choice('a webhook without a secret runs sandboxed when a sandbox runner exists, and says why', () => {
  assert.ok(isUntrustedTrigger({ kind: 'webhook' }));
  assert.ok(isUntrustedTrigger({ kind: 'webhook', webhookSecret: '  ' }));
  assert.not.ok(isUntrustedTrigger({ kind: 'webhook', webhookSecret: 's3cret' }));
  const untrusted = chooseRunner({ trigger: { kind: 'webhook' }, pipeline: { runnerId: far.id }, project: {}, runners: [far, box] });
  assert.is(untrusted.runnerId, box.id);
  assert.match(untrusted.reason, /no secret/);
  // A secret makes it trusted: the pipeline's runner stands.
  assert.is(chooseRunner({ trigger: { kind: 'webhook', webhookSecret: 's3cret' }, pipeline: { runnerId: far.id }, runners: [far, box] }).runnerId, far.id);
  // The trigger's own choice stands even without a secret.
  assert.is(chooseRunner({ trigger: { kind: 'webhook', runnerId: far.id }, pipeline: {}, runners: [far, box] }).runnerId, far.id);
  // Without a sandbox runner, the reason says to add one.
  const none = chooseRunner({ trigger: { kind: 'webhook' }, pipeline: {}, runners: [far] });
  assert.is(none.runnerId, 'local');
  assert.match(none.reason, /add a sandbox runner in Settings → Runners/);
});

choice.run();
