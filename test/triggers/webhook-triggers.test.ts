// Generic webhook triggers end to end: the real webhook server, real HTTP, real runs.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { TriggerConfig } from '../../src/core/api';
import { rejects } from '../helpers/assert';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort, send } from '../helpers/net';
import { waitFor } from '../helpers/temp';

interface Context {
  factory: TestFactory;
  base: string;
  trigger: TriggerConfig;
}

const hooks = suite<Context>('webhook triggers');

async function setUp(context: Context, dir?: string, port?: number) {
  port ??= await freePort();
  context.factory = await startTestFactory({ dir, overrides: { webhookServer: { enabled: true, port } } });
  context.base = `http://127.0.0.1:${port}`;
}

hooks.before.each(async (context) => {
  await setUp(context);
  const pipeline = await context.factory.pipeline([shell('say', 'echo "{{issue.title}} | {{issue.key}} | {{issue.source}} | {{issue.raw.repo.name}} | {{vars.target}}"')]);
  context.trigger = await context.factory.api.saveTrigger({ name: 'Inbound', kind: 'webhook', enabled: true, pipelineId: pipeline.id, variables: { target: 'staging' } });
});
hooks.after.each(async (context) => {
  await context.factory.close();
});

function deliver(context: Context, body: unknown, options: { token?: string | null; query?: string; headers?: Record<string, string>; path?: string } = {}) {
  const token = options.token === undefined ? context.trigger.webhookSecret : options.token;
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
  if (token) headers['X-Factory-Token'] = token;
  return send(`${context.base}${options.path ?? `/hooks/${context.trigger.id}`}${options.query ?? ''}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

hooks('a new trigger gets a random secret, and the snapshot shows the webhook URL', async ({ factory, trigger, base }) => {
  assert.match(trigger.id, /^trg_[0-9a-f]{16}$/);
  assert.match(trigger.webhookSecret!, /^[A-Za-z0-9_-]{32}$/);
  const snapshot = await factory.api.snapshot();
  assert.is(snapshot.webhookUrl, base);
  assert.equal(snapshot.triggers.map((candidate) => candidate.id), [trigger.id]);
  assert.equal(snapshot.triggerStates[trigger.id]!.ledger, []);
});

hooks('the response table: health, not found, unknown trigger, disabled, bad secret, created, duplicate, ignored', async (context) => {
  const { factory, base, trigger } = context;
  const health = await send(`${base}/health`);
  assert.equal([health.status, health.json()], [200, { ok: true }]);
  const other = await send(`${base}/elsewhere`);
  assert.equal([other.status, other.json()], [404, { error: 'not found' }]);
  const unknown = await deliver(context, { title: 'x' }, { path: '/hooks/trg_00000000000000aa' });
  assert.equal([unknown.status, unknown.json()], [404, { error: 'unknown trigger' }]);
  const bad = await deliver(context, { title: 'x' }, { token: 'wrong' });
  assert.equal([bad.status, bad.json()], [401, { error: 'invalid signature' }]);
  assert.is((await deliver(context, { title: 'x' }, { token: null })).status, 401, 'missing secret');
  const created = await deliver(context, { title: 'Deploy', key: 'D-1', repo: { name: 'web' } });
  assert.equal([created.status, created.json()], [201, { issue: 'D-1', created: true }]);
  const repeat = await deliver(context, { title: 'Deploy again', key: 'D-1' });
  assert.equal([repeat.status, repeat.json()], [200, { issue: 'D-1', created: false }]);
  const ignored = await deliver(context, { description: 'no title here' });
  assert.equal([ignored.status, ignored.json()], [202, { ignored: true }]);
  const slash = await deliver(context, { title: 'With slash', key: 'D-2' }, { path: `/hooks/${trigger.id}/` });
  assert.is(slash.status, 201);
  await factory.api.saveTrigger({ ...trigger, enabled: false });
  const disabled = await deliver(context, { title: 'x', key: 'D-3' });
  assert.equal([disabled.status, disabled.json()], [409, { error: 'trigger disabled' }]);

  const runs = await factory.api.listRuns();
  assert.is(runs.length, 2);
  const run = await factory.waitForRun(runs.find((candidate) => candidate.issue?.key === 'D-1')!.id, ['succeeded', 'failed']);
  assert.is(run.triggerId, trigger.id);
  assert.is(run.steps[0]!.output, 'Deploy | D-1 | webhook | web | staging\n');

  const ledger = (await factory.api.snapshot()).triggerStates[trigger.id]!.ledger.map((entry) => entry.decision);
  assert.equal(ledger, ['disabled', `started ${runs[0]!.id}`, 'ignored: no title', 'already processed', `started ${run.id}`, 'invalid signature', 'invalid signature']);
  const text = JSON.stringify((await factory.api.snapshot()).triggerStates);
  assert.not.match(text, new RegExp(trigger.webhookSecret!), 'no secret in the ledger');
  assert.not.match(text, /no title here/, 'no bodies in the ledger');
});

hooks('the secret may come by query, header or bearer; a cleared secret accepts all', async (context) => {
  const secret = context.trigger.webhookSecret!;
  assert.is((await deliver(context, { title: 'q', key: 'Q' }, { token: null, query: `?token=${secret}` })).status, 201);
  assert.is((await deliver(context, { title: 'b', key: 'B' }, { token: null, headers: { Authorization: `Bearer ${secret}` } })).status, 201);
  assert.is((await deliver(context, { title: 'h', key: 'H' })).status, 201);
  assert.is((await deliver(context, { title: 'x', key: 'X' }, { token: null, query: '?token=' + 'a'.repeat(5000) })).status, 401);
  context.trigger = await context.factory.api.saveTrigger({ ...context.trigger, webhookSecret: '' });
  assert.is(context.trigger.webhookSecret, undefined);
  assert.is((await deliver(context, { title: 'open', key: 'O' }, { token: null })).status, 201);
});

hooks('payload fallbacks: summary, ?title=, body, id, generated keys, non-JSON bodies', async (context) => {
  const { factory } = context;
  assert.is((await deliver(context, { summary: 'From summary', body: 'From body', id: 42 })).json().issue, '42');
  assert.is((await deliver(context, {}, { query: '?title=From%20query' })).status, 201);
  const generated = await deliver(context, { title: 'No key' });
  assert.match(generated.json().issue, /^HOOK-\d+/);
  const plain = await deliver(context, 'Plain text alert: disk almost full\nsecond line', { headers: { 'Content-Type': 'text/plain' } });
  assert.is(plain.status, 201);
  const runs = await factory.api.listRuns();
  const byTitle = new Map(runs.map((run) => [run.issue!.title, run.issue!]));
  assert.equal(byTitle.get('From summary')!.description, 'From body');
  assert.ok(byTitle.has('From query'));
  const textIssue = [...byTitle.values()].find((issue) => issue.title.startsWith('Plain text alert'))!;
  assert.is(textIssue.description, 'Plain text alert: disk almost full\nsecond line');
  assert.ok(runs.every((run) => run.issue!.source === 'webhook'));
});

hooks('fifty concurrent duplicates start exactly one run', async (context) => {
  const answers = await Promise.all(Array.from({ length: 50 }, () => deliver(context, { title: 'Race', key: 'RACE-1' })));
  const statuses = answers.map((answer) => answer.status).sort();
  assert.is(statuses.filter((status) => status === 201).length, 1);
  assert.is(statuses.filter((status) => status === 200).length, 49);
  assert.is((await context.factory.api.listRuns({ search: 'RACE-1' })).length, 1);
});

hooks('a repeat after a restart is still a duplicate; a deleted run keeps its key; reset forgets', async (context) => {
  assert.is((await deliver(context, { title: 'Before restart', key: 'R-1' })).status, 201);
  assert.is((await deliver(context, { title: 'Deleted later', key: 'R-2' })).status, 201);
  const port = Number(new URL(context.base).port);
  const dir = context.factory.dir;
  const deleted = (await context.factory.api.listRuns({ search: 'R-2' }))[0]!;
  await context.factory.waitForRun(deleted.id, ['succeeded', 'failed']);
  await context.factory.api.deleteRun(deleted.id);
  await context.factory.stop();
  await setUp(context, dir, port);
  assert.equal((await deliver(context, { title: 'After restart', key: 'R-1' })).json(), { issue: 'R-1', created: false });
  assert.equal((await deliver(context, { title: 'After delete', key: 'R-2' })).json(), { issue: 'R-2', created: false });
  assert.is((await context.factory.api.snapshot()).triggerStates[context.trigger.id]!.processedCount, 2);
  await context.factory.api.resetTrigger(context.trigger.id);
  assert.equal((await deliver(context, { title: 'After reset', key: 'R-1' })).json(), { issue: 'R-1', created: true });
  await context.factory.stop();
  await setUp(context, dir, port);
  assert.equal((await deliver(context, { title: 'Again', key: 'R-2' })).json(), { issue: 'R-2', created: true }, 'the reset holds across a restart');
  assert.equal((await deliver(context, { title: 'Again', key: 'R-1' })).json(), { issue: 'R-1', created: false });
  await context.factory.close();
  context.factory = await startTestFactory();
});

hooks('the ledger of a burst is saved soon after it, and a stop right after deliveries loses none of them', async (context) => {
  const { trigger } = context;
  const file = join(context.factory.dir, 'triggers', `${trigger.id}.json`);
  const savedLedger = () => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { state: { ledger: unknown[] } }).state.ledger.length : 0);
  const burst = await Promise.all(Array.from({ length: 30 }, (_, index) => deliver(context, { description: `no title ${index}` })));
  assert.ok(burst.every((answer) => answer.status === 202));
  await waitFor(() => savedLedger() === 30, 5000, 'the burst in the trigger file');
  if (process.platform !== 'win32') assert.is(statSync(file).mode & 0o777, 0o600, 'the trigger file is private');
  await Promise.all(Array.from({ length: 5 }, () => deliver(context, { title: 'x' }, { token: 'wrong' })));
  const port = Number(new URL(context.base).port);
  const dir = context.factory.dir;
  await context.factory.stop();
  assert.is(savedLedger(), 35);
  await setUp(context, dir, port);
  const ledger = (await context.factory.api.snapshot()).triggerStates[trigger.id]!.ledger;
  assert.equal(ledger.slice(0, 6).map((entry) => entry.decision), [...Array(5).fill('invalid signature'), 'ignored: no title']);
});

hooks('trigger methods validate; deleting a trigger deletes its state; a used pipeline cannot be deleted', async (context) => {
  const { factory, trigger } = context;
  await rejects(factory.api.saveTrigger({ name: '', kind: 'webhook', enabled: true, pipelineId: 'pl_nope' }), /^The name is empty[\s\S]*^Choose the pipeline the trigger runs/m);
  await rejects(factory.api.saveTrigger({ name: 'L', kind: 'linear', enabled: true, pipelineId: trigger.pipelineId }), /^Choose the account the trigger uses/m);
  assert.equal(await factory.api.testTrigger({ ...trigger }), { ok: true, issues: [] });
  const failing = await factory.api.testTrigger({ ...trigger, pipelineId: 'pl_x' });
  assert.is(failing.ok, false);
  assert.match(failing.error!, /^Choose the pipeline the trigger runs \(the pipeline `pl_x` no longer exists\)$/);
  assert.equal(failing.fields?.map((problem) => problem.field), ['pipelineId'], 'the form finds the field from fields, not from the words');
  assert.equal((await factory.api.pollTrigger(trigger.id)).triggerId, trigger.id);
  await rejects(factory.api.deletePipeline(trigger.pipelineId), /used by the trigger `Inbound`/);
  await deliver(context, { title: 'x', key: 'K' });
  await waitFor(() => existsSync(join(factory.dir, 'triggers', `${trigger.id}.json`)), 5000, 'the trigger file');
  await factory.api.deleteTrigger(trigger.id);
  assert.not.ok(existsSync(join(factory.dir, 'triggers', `${trigger.id}.json`)));
  assert.is((await deliver(context, { title: 'x' })).status, 404);
  await rejects(factory.api.deleteTrigger(trigger.id), /No trigger/);
});

hooks('an approval pipeline: a webhook run waits like any other', async (context) => {
  const gate = await context.factory.pipeline([approval('ok', 'Go?')], { name: 'Gate' });
  const trigger = await context.factory.api.saveTrigger({ name: 'Gate hook', kind: 'webhook', enabled: true, pipelineId: gate.id });
  const answer = await send(`${context.base}/hooks/${trigger.id}?token=${trigger.webhookSecret}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"title":"Wait"}' });
  assert.is(answer.status, 201);
  const run = (await context.factory.api.listRuns({ pipelineId: gate.id }))[0]!;
  await context.factory.waitForRun(run.id, ['waiting']);
});

const portTaken = suite('webhook server port taken');

portTaken('the app keeps running, says so in the snapshot and leaves a "Trigger errors" inbox item naming the port', async () => {
  const port = await freePort();
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
  const factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } } });
  try {
    await waitFor(async () => (await factory.api.snapshot()).inbox.some((item) => item.title === 'Trigger errors'), 2000, 'the inbox item');
    const snapshot = await factory.api.snapshot();
    assert.is(snapshot.webhookUrl, null);
    assert.match(snapshot.webhookError!, new RegExp(String(port)));
    const item = snapshot.inbox.find((candidate) => candidate.title === 'Trigger errors')!;
    assert.is(item.kind, 'trigger.error');
    assert.match(item.body!, new RegExp(`webhook server failed to start.*${port}`));
    blocker.close();
    await factory.api.saveSettings({ webhookServer: { port: await freePort() } });
    assert.ok((await factory.api.snapshot()).webhookUrl);
    assert.is(JSON.parse(readFileSync(join(factory.dir, 'config.json'), 'utf8')).settings.webhookServer.enabled, true);
  } finally {
    blocker.close();
    await factory.close();
  }
});

hooks.run();
portTaken.run();
