// The statuses of a trigger's recent events (ui/views/decision-status.ts): by meaning, with words.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decisionStatus, shortRunId } from '../../ui/views/decision-status';

const events = suite('trigger event statuses');

events('a started run is a success, without its id in the words', () => {
  const status = decisionStatus('started run_k3x9q2abcdef', 'run_k3x9q2abcdef');
  assert.is(status.kind, 'started');
  assert.is(status.label, 'Started');
  assert.is(status.detail, '');
  assert.is(decisionStatus('started run_abc for agent session s1', 'run_abc').detail, 'for agent session s1');
});

events('an invalid signature is refused and named as a possible forgery', () => {
  const status = decisionStatus('invalid signature');
  assert.is(status.kind, 'refused');
  assert.is(status.label, 'Invalid signature');
  assert.is(status.glyph, '⚠');
  assert.match(status.detail, /possibly forged/);
});

events('refusals and errors are dangers; ignored and processed are neutral', () => {
  assert.is(decisionStatus('refused: agent session events must be signed').kind, 'refused');
  assert.is(decisionStatus('refused: agent session events must be signed').detail, 'agent session events must be signed');
  assert.is(decisionStatus('invalid: not JSON').kind, 'refused');
  assert.is(decisionStatus('dropped: too many unsigned deliveries; set a webhook secret').kind, 'refused');
  assert.is(decisionStatus('error: Linear answered 500').kind, 'error');
  assert.is(decisionStatus('error: Linear answered 500').detail, 'Linear answered 500');
  assert.is(decisionStatus('poll failed: connection refused').kind, 'error');
  assert.equal(decisionStatus('ignored: no title'), { kind: 'ignored', label: 'Ignored', glyph: '–', detail: 'no title' });
  assert.is(decisionStatus('already processed').kind, 'ignored');
  assert.is(decisionStatus('already processed').detail, 'already processed');
});

events('a run id is shortened for its link', () => {
  assert.is(shortRunId('run_k3x9q2abcdef'), 'k3x9q2ab');
});

events.run();
