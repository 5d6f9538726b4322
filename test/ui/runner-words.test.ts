// The trigger editor's runner line (ui/views/runner-words.ts): the same runner as the engine's rule
// (core/runner-choice.ts chooseRunner) in every combination, and the reason in words.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Runner } from '../../src/core/api';
import { chooseRunner } from '../../src/core/runner-choice';
import { runnerChoices, runnerOfTrigger, triggerRunnerLine } from '../../ui/views/runner-words';

const words = suite('runner words');

const local: Runner = { id: 'local', name: 'This computer', kind: 'local' };
const sandbox: Runner = { id: 'rnr_sandbox1', name: 'Sandbox', kind: 'sandbox' };
const sandbox2: Runner = { id: 'rnr_sandbox2', name: 'Sandbox offline', kind: 'sandbox', network: false };
const ssh: Runner = { id: 'rnr_ssh1', name: 'Build box', kind: 'ssh', host: 'build.example.com' };

words('chooses the same runner as the engine in every combination', () => {
  const ids = [undefined, 'local', sandbox.id, sandbox2.id, ssh.id];
  let cases = 0;
  for (const runners of [[local], [local, ssh], [local, ssh, sandbox, sandbox2]]) {
    for (const kind of ['webhook', 'github', 'linear'] as const) {
      for (const webhookSecret of [undefined, '', '  ', 's3cret']) {
        for (const triggerRunner of ids) for (const pipelineRunner of ids) for (const projectRunner of ids) {
          const sources = {
            trigger: { kind, webhookSecret, runnerId: triggerRunner },
            pipeline: { runnerId: pipelineRunner },
            project: { runnerId: projectRunner },
            runners,
          };
          const engine = chooseRunner(sources).runnerId;
          assert.is(runnerOfTrigger(sources).runnerId, engine, JSON.stringify(sources));
          cases += 1;
        }
      }
    }
  }
  assert.ok(cases > 1000);
});

words('says which runner the runs use and why', () => {
  const runners = [local, ssh, sandbox];
  assert.is(triggerRunnerLine({ trigger: { kind: 'webhook' }, pipeline: {}, project: {}, runners }),
    'Runs use the sandbox runner “Sandbox”: this webhook has no secret, so anyone who can reach it writes the issue');
  assert.is(triggerRunnerLine({ trigger: { kind: 'webhook', webhookSecret: 'x' }, pipeline: {}, project: { runnerId: 'local' }, runners }),
    'Runs use This computer, this project’s runner');
  assert.is(triggerRunnerLine({ trigger: { kind: 'github' }, pipeline: { runnerId: ssh.id }, project: {}, runners }),
    'Runs use the ssh runner “Build box”, the pipeline’s runner');
  assert.is(triggerRunnerLine({ trigger: { kind: 'webhook', webhookSecret: 'x', runnerId: ssh.id }, pipeline: {}, project: {}, runners }),
    'Runs use the ssh runner “Build box”, chosen above');
  assert.is(triggerRunnerLine({ trigger: { kind: 'linear' }, pipeline: {}, project: {}, runners }),
    'Runs use This computer: neither this trigger, its pipeline nor its project names a runner');
  assert.match(triggerRunnerLine({ trigger: { kind: 'webhook' }, pipeline: {}, project: {}, runners: [local] }),
    /^Runs use This computer: neither .*\. Careful: this webhook has no secret, .* add a sandbox runner in Settings → Runners$/);
});

words('a runner menu offers the inherited default first, then each runner', () => {
  assert.equal(runnerChoices([local, sandbox], 'Project’s runner (This computer)'),
    [['', 'Project’s runner (This computer)'], ['local', 'This computer'], [sandbox.id, 'Sandbox (sandbox)']]);
});

words.run();
