// Issue text never runs as code, end to end: a generic webhook trigger, the real webhook server,
// real HTTP and real runs under /bin/sh. A pipeline that carries the title through a variable
// into a code place is refused when it is saved; one that keeps it as data runs a hostile title
// as plain text.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SavedPipeline, TriggerConfig } from '../../src/core/api';
import { rejects } from '../helpers/assert';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort, send } from '../helpers/net';

interface Context {
  factory: TestFactory;
  base: string;
  /** A folder for the file a hostile title would create. */
  folder: string;
}

const injection = suite<Context>('shell injection through a webhook');

injection.before.each(async (context) => {
  const port = await freePort();
  context.factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } } });
  context.base = `http://127.0.0.1:${port}`;
  context.folder = mkdtempSync(join(tmpdir(), 'factory-injection-'));
});
injection.after.each(async (context) => {
  await context.factory.close();
  rmSync(context.folder, { recursive: true, force: true });
});

function deliver(context: Context, trigger: TriggerConfig, body: unknown) {
  return send(`${context.base}/hooks/${trigger.id}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Factory-Token': trigger.webhookSecret! },
    body: JSON.stringify(body),
  });
}

injection('a pipeline that exports the title and compares it as a number in bash -c is refused at save', async ({ factory }) => {
  const error = await rejects(factory.pipeline([shell('check', 'export PRIO="{{issue.title}}"\nbash -c \'[[ $PRIO -gt 2 ]]\'')]), /PRIO/);
  assert.match(error.message, 'the command has `PRIO`, which holds `{{issue.title}}` and is compared as a number (arithmetic) in `[[ $PRIO -gt 2 ]]` in the script of `bash -c`, where the shell runs text as code');
  // The same through the step's own environment, and through a plain assignment into $(( )).
  await rejects(factory.pipeline([shell('check', 'bash -c \'[[ $PRIO -gt 2 ]]\'', { env: { PRIO: '{{issue.title}}' } })]), /`PRIO`, which holds `\{\{issue\.title\}\}`/);
  await rejects(factory.pipeline([shell('check', 'x="{{issue.title}}"; echo $((x))')]), /`x`, which holds `\{\{issue\.title\}\}` and is read as arithmetic in `\$\(\(x\)\)`/);
  assert.equal((await factory.api.snapshot()).pipelines.filter((pipeline) => pipeline.steps.some((step) => step.id === 'check')), [], 'nothing was saved');
});

injection('a webhook titled a[$(touch X)] never creates X through a pipeline that keeps the title as data', async (context) => {
  const { factory, folder } = context;
  const marker = join(folder, 'X');
  const steps = [
    shell('compare', 'export PRIO="{{issue.title}}"\nbash -c \'if [ "$PRIO" -gt 2 ] 2>/dev/null; then echo high; else echo "not a number: $PRIO"; fi\''),
    // Steps run under /bin/sh; bash is asked for by name where its syntax is used.
    shell('digits', 'export T="{{issue.title}}"\nbash -c \'digits="${T//[!0-9]/}"; echo "$(( digits + 1 ))"; [[ $T == a* ]] && echo "starts with a"\''),
    shell('checked', 'n="{{issue.title}}"; case "$n" in ""|*[!0-9]*) echo "refusing $n"; exit 0;; esac; echo $(( n * 2 ))'),
  ];
  const pipeline: SavedPipeline = await factory.pipeline(steps);
  assert.equal(pipeline.warnings ?? [], [], 'saved without a warning');
  const trigger = await factory.api.saveTrigger({ name: 'Inbound', kind: 'webhook', enabled: true, pipelineId: pipeline.id, variables: {} });

  const title = `a[$(touch ${marker})]`;
  const created = await deliver(context, trigger, { title, key: 'H-1' });
  assert.is(created.status, 201);
  const [started] = await factory.api.listRuns();
  const run = await factory.waitForRun(started!.id, ['succeeded', 'failed']);
  assert.is(run.status, 'succeeded');
  const [compared, digits, checked] = run.steps.map((step) => step.output);
  assert.is(compared, `not a number: ${title}\n`);
  assert.match(digits!, /^\d+\nstarts with a\n$/); // the temporary folder's name may hold digits
  assert.is(checked, `refusing ${title}\n`);
  assert.not.ok(existsSync(marker), 'the title ran as code');
});

injection.run();
