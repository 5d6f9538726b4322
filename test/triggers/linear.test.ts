// Linear end to end: the production provider against a fake Linear (a real GraphQL server on
// 127.0.0.1), with a real Factory, real runs and the real webhook server.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionView, TriggerConfig, TriggerInput } from '../../src/core/api';
import { FakeLinear, linearErrors, type FakeIssue } from '../fakes/linear';
import { rejects } from '../helpers/assert';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { waitFor } from '../helpers/temp';

interface Context {
  factory: TestFactory;
  fake: FakeLinear;
  account: ConnectionView;
  hooks: string;
  pipelineId: string;
}

const linear = suite<Context>('linear');
const secret = 'linear-signing-secret-0123456789';

linear.before.each(async (context) => {
  const port = await freePort();
  context.fake = await FakeLinear.start();
  context.factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } }, triggerTuning: { firstPollDelayMs: 3600_000, writeBackRetryDelaysMs: [50, 50] } });
  context.hooks = `http://127.0.0.1:${port}/hooks`;
  context.account = await context.factory.api.saveConnection({ kind: 'linear', name: 'Acme', baseUrl: context.fake.url, token: context.fake.apiKey });
  const pipeline = await context.factory.pipeline([shell('say', 'echo "{{issue.key}} | {{issue.title}} | {{issue.labels}} | {{issue.priority}} | {{issue.source}} | {{issue.url}} | {{issue.raw.state.name}}"')]);
  context.pipelineId = pipeline.id;
});
linear.after.each(async (context) => {
  await context.factory.close();
  await context.fake.stop();
});

function trigger(context: Context, extra: Partial<TriggerInput> = {}): Promise<TriggerConfig> {
  return context.factory.api.saveTrigger({ name: 'Agent issues', kind: 'linear', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter: { team: 'ENG' }, webhookSecret: secret, ...extra });
}

async function runKeys(context: Context): Promise<string[]> {
  return (await context.factory.api.listRuns()).map((run) => run.issue!.key!).sort();
}

function ledger(context: Context, triggerId: string): Promise<string[]> {
  return context.factory.api.snapshot().then((snapshot) => snapshot.triggerStates[triggerId]!.ledger.map((entry) => `${entry.key ?? ''} ${entry.decision.replace(/run_\w+/, 'run_…')}`.trim()));
}

function deliver(context: Context, triggerId: string, action: 'create' | 'update' | 'remove', issue: FakeIssue, options: Parameters<FakeLinear['deliver']>[2] & { updatedFrom?: Record<string, unknown>; at?: number } = {}) {
  return context.fake.deliver(`${context.hooks}/${triggerId}`, context.fake.webhookPayload(action, issue, options.updatedFrom, options.at), { secret, ...options });
}

// ─── Connections ───

linear('an account is verified before it is saved, and its key never leaves the engine', async ({ factory, fake, account }) => {
  assert.equal(account.account, { id: fake.viewer.id, name: 'Ada Lovelace', email: 'ada@example.com' });
  assert.is(account.hasToken, true);
  assert.not.ok('token' in account);
  const [call] = fake.callsOf('viewer');
  assert.is(call!.headers.authorization, fake.apiKey, 'a personal key goes bare, without Bearer');
  const oauth = await factory.api.testConnection({ kind: 'linear', name: 'OAuth', baseUrl: fake.url, token: fake.oauthToken });
  assert.equal(oauth.ok, true);
  assert.is(fake.callsOf('viewer').at(-1)!.headers.authorization, `Bearer ${fake.oauthToken}`);
  const renamed = await factory.api.saveConnection({ id: account.id, kind: 'linear', name: 'Acme Corp', baseUrl: fake.url });
  assert.is(renamed.name, 'Acme Corp');
  assert.is(fake.callsOf('viewer').at(-1)!.headers.authorization, fake.apiKey, 'saving without a token keeps the stored one');
  const snapshot = JSON.stringify(await factory.api.snapshot());
  assert.not.ok(snapshot.includes(fake.apiKey));
  assert.is((await factory.api.snapshot()).accounts.length, 1);
});

linear('a bad key, an unreachable host and a page that is not Linear give clear errors and save nothing', async ({ factory, fake }) => {
  const bad = await factory.api.testConnection({ kind: 'linear', name: 'x', baseUrl: fake.url, token: 'lin_api_wrong' });
  assert.equal(bad, { ok: false, error: 'Linear refused the API key: You need to authenticate to access this operation.' });
  const port = await freePort();
  const unreachable = await factory.api.testConnection({ kind: 'linear', name: 'x', baseUrl: `http://127.0.0.1:${port}`, token: fake.apiKey });
  assert.equal(unreachable, { ok: false, error: `Couldn't reach Linear at 127.0.0.1:${port} (connection refused)\nDetails: POST http://127.0.0.1:${port}/graphql: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}` });
  await rejects(factory.api.saveConnection({ kind: 'linear', name: 'x', baseUrl: fake.url, token: 'lin_api_wrong' }), /Linear refused the API key/);
  await rejects(factory.api.saveConnection({ kind: 'linear', name: 'x', baseUrl: `${fake.url}/elsewhere`, token: fake.apiKey }), /answered HTTP 404 without Linear's GraphQL answer/);
  await rejects(factory.api.saveConnection({ kind: 'linear', name: 'x', baseUrl: 'ftp://x', token: fake.apiKey }), /^The API address must be an http\(s\) address/m);
  await rejects(factory.api.saveConnection({ kind: 'linear', name: 'x', token: 'two words' }), /^The token must be the key/m);
  assert.is((await factory.api.snapshot()).accounts.length, 1, 'only the account of the setup');
});

linear('an account cannot be deleted while a trigger uses it', async (context) => {
  const used = await trigger(context);
  await rejects(context.factory.api.deleteConnection(context.account.id), /used by the trigger `Agent issues`/);
  await context.factory.api.deleteTrigger(used.id);
  await context.factory.api.deleteConnection(context.account.id);
  assert.equal((await context.factory.api.snapshot()).accounts, []);
});

// ─── Triggers: checking and preview ───

linear('saving checks the team and state names with Linear; the preview lists the matching issues', async (context) => {
  const { factory, fake } = context;
  await rejects(trigger(context, { filter: { team: 'NOPE' } }), /^Linear has no team with the key `NOPE` \(this account sees ENG, OPS\)/m);
  await rejects(trigger(context, { filter: { team: 'ENG', states: ['Doing'] } }), /^The team ENG has no state `Doing`/m);
  await rejects(trigger(context, { writeBack: { comment: true, states: { started: 'Shipping' } } }), /^The team ENG has no state `Shipping`/m);
  for (let index = 1; index <= 25; index++) fake.addIssue({ title: `Issue ${index}`, labels: index % 2 ? ['agent'] : [] });
  fake.addIssue({ title: 'Finished', state: 'Done', labels: ['agent'] });
  const preview = await factory.api.testTrigger({ name: 'p', kind: 'linear', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter: { team: 'eng', labels: ['Agent'] } });
  assert.is(preview.ok, true, preview.error);
  assert.is(preview.issues.length, 13);
  assert.ok(preview.issues.every((issue) => issue.labels!.includes('agent') && issue.source === 'linear'));
  const failing = await factory.api.testTrigger({ name: 'p', kind: 'linear', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter: { team: 'XX' } });
  assert.equal([failing.ok, failing.issues], [false, []]);
  assert.match(failing.error!, /no team with the key `XX`/);
  assert.is((await factory.api.listRuns()).length, 0, 'a preview starts nothing');
});

// ─── Polling ───

linear('the first poll is full and paginated; later polls ask only for changes and start only new matches', async (context) => {
  const { factory, fake } = context;
  for (let index = 1; index <= 230; index++) fake.addIssue({ title: `Issue ${index}`, labels: ['agent'] });
  fake.addIssue({ title: 'Elsewhere', team: 'OPS', labels: ['agent'] });
  fake.addIssue({ title: 'Done already', state: 'Done', labels: ['agent'] });
  const saved = await trigger(context, { filter: { team: 'ENG', labels: ['agent'] } });
  const state = await factory.api.pollTrigger(saved.id);
  assert.is(state.lastError, undefined);
  assert.is(fake.callsOf('issues').length, 3, '230 issues in pages of 100');
  assert.is((await factory.api.listRuns({ limit: 1000 })).length, 230);
  assert.is(state.processedCount, 230);
  const first = fake.callsOf('issues')[0]!.variables;
  assert.equal(first.orderBy, 'createdAt');
  assert.equal(first.filter.and[0], { team: { key: { eqIgnoreCase: 'ENG' } } });

  const fresh = fake.addIssue({ title: 'Fresh one', labels: ['agent'] });
  fake.update(fake.issues[0]!, { title: 'Issue 1, renamed' });
  const before = fake.callsOf('issues').length;
  await factory.api.pollTrigger(saved.id);
  const incremental = fake.callsOf('issues').slice(before);
  assert.is(incremental.length, 1);
  assert.equal(incremental[0]!.variables.orderBy, 'updatedAt');
  assert.ok(incremental[0]!.variables.filter.and.some((part: { updatedAt?: unknown }) => part.updatedAt), 'asks for changes since the cursor');
  const runs = await factory.api.listRuns({ limit: 1000 });
  assert.is(runs.length, 231);
  assert.ok(runs.some((run) => run.issue!.key === fresh.identifier));
  const entries = await ledger(context, saved.id);
  assert.equal(entries.slice(0, 2).sort(), [`${fake.issues[0]!.identifier} already processed`, `${fresh.identifier} started run_…`].sort());
});

linear('a changed filter makes the next poll a full one, so issues that match now start', async (context) => {
  const { factory, fake } = context;
  const bug = fake.addIssue({ title: 'An old bug', labels: ['bug'] });
  fake.addIssue({ title: 'Agent work', labels: ['agent'] });
  const saved = await trigger(context, { filter: { team: 'ENG', labels: ['agent'] } });
  await factory.api.pollTrigger(saved.id);
  await factory.api.pollTrigger(saved.id);
  assert.is((await factory.api.listRuns()).length, 1);
  await factory.api.saveTrigger({ ...saved, filter: { team: 'ENG', labels: ['agent', 'bug'] } });
  await factory.api.pollTrigger(saved.id);
  assert.equal(await runKeys(context), ['ENG-1', 'ENG-2']);
  assert.is(fake.callsOf('issues').at(-1)!.variables.orderBy, 'createdAt', 'a full poll');
  assert.ok(bug);
});

linear('each filter, in a poll: states (types and names), labels (any of), assignee me, an email, none', async (context) => {
  const { factory, fake } = context;
  const grace = fake.users[1]!;
  const mine = fake.addIssue({ title: 'Mine', labels: ['agent'], assignee: fake.viewer, state: 'In Progress' });
  const graces = fake.addIssue({ title: 'Grace’s', labels: ['bug'], assignee: grace, state: 'Backlog' });
  const nobodys = fake.addIssue({ title: 'Nobody’s', labels: ['agent', 'x'], state: 'Todo' });
  fake.addIssue({ title: 'Unlabelled', state: 'Todo', assignee: fake.viewer });
  const cases: [TriggerInput['filter'], FakeIssue[]][] = [
    [{ team: 'ENG', states: ['started'] }, [mine]],
    [{ team: 'ENG', states: ['Backlog', 'unstarted'] }, [graces, nobodys, fake.issues[3]!]],
    [{ team: 'ENG', labels: ['agent', 'bug'] }, [mine, graces, nobodys]],
    [{ team: 'ENG', labels: ['agent'], assignee: 'me' }, [mine]],
    [{ team: 'ENG', assignee: 'grace@example.com' }, [graces]],
    [{ team: 'ENG', labels: ['agent'], assignee: 'none' }, [nobodys]],
  ];
  for (const [filter, expected] of cases) {
    const result = await factory.api.testTrigger({ name: 'f', kind: 'linear', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter });
    assert.equal(result.issues.map((issue) => issue.key).sort(), expected.map((issue) => issue.identifier).sort(), JSON.stringify(filter));
  }
});

linear('a poll failing halfway loses nothing and starts nothing twice', async (context) => {
  const { factory, fake } = context;
  for (let index = 1; index <= 150; index++) fake.addIssue({ title: `Issue ${index}` });
  const saved = await trigger(context);
  fake.script(linearErrors.internal(), (call) => call.fields.includes('issues') && Boolean(call.variables.after));
  const failed = await factory.api.pollTrigger(saved.id);
  assert.match(failed.lastError!, /Linear: Internal server error/);
  assert.is((await factory.api.listRuns({ limit: 1000 })).length, 100, 'the first page started its runs');
  const healed = await factory.api.pollTrigger(saved.id);
  assert.is(healed.lastError, undefined);
  const keys = await runKeys(context);
  assert.is(keys.length, 150);
  assert.is(new Set(keys).size, 150, 'no issue started twice');
});

linear('a rate limit pauses polling until it lifts and shows in the state; an error is told once per streak', async (context) => {
  const { factory, fake } = context;
  const inbox = factory.record('inbox');
  const saved = await trigger(context);
  const resetAt = Date.now() + 120_000;
  fake.script(linearErrors.rateLimited(resetAt));
  const limited = await factory.api.pollTrigger(saved.id);
  assert.is(limited.rateLimitedUntil, resetAt);
  assert.ok(limited.nextPollAt! >= resetAt, 'the next poll waits for the reset');
  const calls = fake.calls.length;
  const skipped = await factory.api.pollTrigger(saved.id);
  assert.is(fake.calls.length, calls, 'no request while rate limited');
  assert.match((await ledger(context, saved.id))[0]!, /^poll skipped: rate limited until/);
  assert.is(skipped.rateLimitedUntil, resetAt);
  assert.not.ok(inbox.some((item) => item.kind === 'trigger.error'), 'a rate limit is not an error notice');
});

linear('a failing poll is told once per failure streak, and recovers', async (context) => {
  const { factory, fake } = context;
  const inbox = factory.record('inbox');
  const saved = await trigger(context);
  fake.script(linearErrors.authentication());
  fake.script(linearErrors.authentication());
  assert.match((await factory.api.pollTrigger(saved.id)).lastError!, /Linear refused the API key/);
  assert.match((await factory.api.pollTrigger(saved.id)).lastError!, /Linear refused the API key/);
  await waitFor(() => inbox.some((item) => item.kind === 'trigger.error'), 2000, 'the trigger error');
  assert.is(inbox.filter((item) => item.kind === 'trigger.error').length, 1);
  assert.equal(inbox.find((item) => item.kind === 'trigger.error')!.title, 'Trigger errors: Agent issues');
  assert.is((await factory.api.pollTrigger(saved.id)).lastError, undefined);
});

// ─── Webhooks ───

linear('webhook: signatures (wrong, missing, wrong length, other header name) and the replay window', async (context) => {
  const { fake } = context;
  const saved = await trigger(context, { webhookSecret: secret });
  const issue = fake.addIssue({ title: 'Signed' });
  assert.equal(await deliver(context, saved.id, 'create', issue, { secret: 'wrong-secret' }), { status: 401, body: { error: 'invalid signature' } });
  assert.is((await deliver(context, saved.id, 'create', issue, { signature: null })).status, 401);
  assert.is((await deliver(context, saved.id, 'create', issue, { signature: 'abc' })).status, 401);
  assert.is((await deliver(context, saved.id, 'create', issue, { at: Date.now() - 120_000 })).status, 401);
  assert.is((await deliver(context, saved.id, 'create', issue, { at: Date.now() + 120_000 })).status, 401);
  const entries = await ledger(context, saved.id);
  assert.equal(entries.slice(0, 5).map((entry) => entry.replace(/-?\d+ s/, 'N s')), ['stale timestamp: N s from now', 'stale timestamp: N s from now', 'invalid signature', 'invalid signature', 'invalid signature']);
  const payload = fake.webhookPayload('create', issue);
  const body = JSON.stringify(payload);
  const { createHmac } = await import('node:crypto');
  const response = await fetch(`${context.hooks}/${saved.id}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Tracker-Signature': createHmac('sha256', secret).update(body).digest('hex') }, body });
  assert.equal([response.status, await response.json()], [201, { issue: issue.identifier, created: true }]);
  assert.is((await context.factory.api.listRuns()).length, 1);
});

linear('webhook: create and update are handled; remove, comments and other kinds are ignored; a non-Linear body is 400', async (context) => {
  const { fake } = context;
  const saved = await trigger(context, { webhookSecret: secret });
  const issue = fake.addIssue({ title: 'Webhook issue' });
  assert.equal(await deliver(context, saved.id, 'remove', issue), { status: 202, body: { ignored: true } });
  const comment = { action: 'create', type: 'Comment', webhookTimestamp: Date.now(), data: { id: 'c1', body: 'hi', issueId: issue.id } };
  assert.equal(await fake.deliver(`${context.hooks}/${saved.id}`, comment, { secret }), { status: 202, body: { ignored: true } });
  const notJson = await fake.deliver(`${context.hooks}/${saved.id}`, {}, { secret, rawBody: 'not json' });
  assert.is(notJson.status, 400);
  assert.match(notJson.body.error, /^the body is not JSON: /);
  const notLinear = await fake.deliver(`${context.hooks}/${saved.id}`, { hello: 'world' }, { secret });
  assert.equal(notLinear, { status: 400, body: { error: 'not a Linear webhook: it needs type, action and data' } });
  assert.equal(await deliver(context, saved.id, 'create', issue), { status: 201, body: { issue: issue.identifier, created: true } });
  fake.update(issue, { title: 'Webhook issue, edited' });
  assert.equal(await deliver(context, saved.id, 'update', issue), { status: 200, body: { issue: issue.identifier, created: false } });
  const run = (await context.factory.api.listRuns())[0]!;
  const done = await context.factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.steps[0]!.output, `${issue.identifier} | Webhook issue | ${''} | No priority | linear | https://linear.app/acme/issue/${issue.identifier}/webhook-issue | Todo\n`);
});

linear('webhook without a secret: the issue is read from Linear, so a forged body cannot make one up', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context, { webhookSecret: '' });
  const issue = fake.addIssue({ title: 'The real title' });
  const forged = fake.webhookPayload('create', issue);
  forged.data.title = 'rm -rf / (a forged title)';
  assert.equal(await fake.deliver(`${context.hooks}/${saved.id}`, forged), { status: 201, body: { issue: issue.identifier, created: true } });
  assert.is((await factory.api.listRuns())[0]!.issue!.title, 'The real title');
  const invented = { ...fake.webhookPayload('create', issue), data: { ...forged.data, id: 'x', identifier: 'ENG-999' } };
  assert.equal(await fake.deliver(`${context.hooks}/${saved.id}`, invented), { status: 202, body: { ignored: true } });
  assert.is((await ledger(context, saved.id))[0], 'ENG-999 ignored: unsigned event for an issue Linear does not have');
  assert.is((await factory.api.listRuns()).length, 1);
});

linear('webhook: each filter is checked (team, labels, states, assignee) and a filtered-out event is 202', async (context) => {
  const { fake } = context;
  const saved = await trigger(context, { filter: { team: 'ENG', labels: ['agent'], states: ['unstarted'], assignee: 'me' } });
  const cases: [FakeIssue, string][] = [
    [fake.addIssue({ title: 'Other team', team: 'OPS', labels: ['agent'], assignee: fake.viewer }), 'ignored: not in team ENG'],
    [fake.addIssue({ title: 'No label', assignee: fake.viewer }), 'ignored: has none of the labels agent'],
    [fake.addIssue({ title: 'Started', state: 'In Progress', labels: ['agent'], assignee: fake.viewer }), 'ignored: in state In Progress (started), not unstarted'],
    [fake.addIssue({ title: 'Grace’s', labels: ['agent'], assignee: fake.users[1]! }), 'ignored: not assigned to Ada Lovelace'],
  ];
  for (const [issue, reason] of cases) {
    assert.equal(await deliver(context, saved.id, 'create', issue), { status: 202, body: { ignored: true } });
    assert.is((await ledger(context, saved.id))[0], `${issue.identifier} ${reason}`);
  }
  const match = fake.addIssue({ title: 'Match', labels: ['Agent'], assignee: fake.viewer });
  assert.is((await deliver(context, saved.id, 'create', match)).status, 201);
});

linear('re-trigger: an issue that leaves the filter and enters again starts a new run, by webhook and by poll', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context, { filter: { team: 'ENG', labels: ['agent'] } });
  const issue = fake.addIssue({ title: 'Come and go', labels: ['agent'] });
  assert.is((await deliver(context, saved.id, 'create', issue)).status, 201);
  let from = fake.update(issue, { title: 'Come and go, edited' });
  assert.is((await deliver(context, saved.id, 'update', issue, { updatedFrom: from })).status, 200, 'still in: no new run');
  from = fake.update(issue, { labels: [] });
  assert.equal(await deliver(context, saved.id, 'update', issue, { updatedFrom: from }), { status: 202, body: { ignored: true } });
  assert.match((await ledger(context, saved.id))[0]!, /left the filter \(has none of the labels agent\)/);
  from = fake.update(issue, { labels: ['agent'] });
  assert.equal(await deliver(context, saved.id, 'update', issue, { updatedFrom: from }), { status: 201, body: { issue: issue.identifier, created: true } });
  assert.is((await factory.api.listRuns()).length, 2);

  // The same by polling: the label goes, a poll sees it leave, it comes back, a poll starts a run.
  await factory.api.pollTrigger(saved.id);
  fake.update(issue, { labels: [] });
  await factory.api.pollTrigger(saved.id);
  assert.match((await ledger(context, saved.id))[0]!, /left the filter/);
  fake.update(issue, { labels: ['agent'] });
  await factory.api.pollTrigger(saved.id);
  assert.is((await factory.api.listRuns()).length, 3);
  assert.is((await factory.api.pollTrigger(saved.id)).processedCount, 1);
});

linear('dedup across poll and webhook; a retried delivery, a stale event and 50 concurrent duplicates start nothing more', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context);
  const polled = fake.addIssue({ title: 'Seen by a poll first' });
  await factory.api.pollTrigger(saved.id);
  assert.equal(await deliver(context, saved.id, 'create', polled), { status: 200, body: { issue: polled.identifier, created: false } });

  const hooked = fake.addIssue({ title: 'Seen by a webhook first' });
  const deliveryId = 'b7e1d6f2-0000-4000-8000-000000000001';
  assert.is((await deliver(context, saved.id, 'create', hooked, { deliveryId })).status, 201);
  await factory.api.pollTrigger(saved.id);
  // Linear retries a delivery with the same id (1 min, 1 h, 6 h later), even after the issue left and came back.
  fake.update(hooked, { state: 'Done' });
  await factory.api.pollTrigger(saved.id);
  fake.update(hooked, { state: 'Todo' });
  const retry = await deliver(context, saved.id, 'create', hooked, { deliveryId });
  assert.equal(retry, { status: 200, body: { issue: hooked.identifier, created: false } });
  assert.match((await ledger(context, saved.id))[0]!, /already processed: delivery .* was decided before/);

  const burst = fake.addIssue({ title: 'Fifty at once' });
  const answers = await Promise.all(Array.from({ length: 50 }, () => deliver(context, saved.id, 'create', burst)));
  assert.is(answers.filter((answer) => answer.status === 201).length, 1);
  assert.is(answers.filter((answer) => answer.status === 200).length, 49);
  const keys = await runKeys(context);
  assert.equal(keys, [polled.identifier, hooked.identifier, burst.identifier].sort());

  const staleAt = burst.updatedAt;
  fake.update(burst, { title: 'Fifty at once, edited' });
  await deliver(context, saved.id, 'update', burst);
  const stale = context.fake.webhookPayload('update', burst);
  stale.data.updatedAt = staleAt;
  assert.equal(await fake.deliver(`${context.hooks}/${saved.id}`, stale, { secret }), { status: 200, body: { issue: burst.identifier, created: false } });
  assert.match((await ledger(context, saved.id))[0]!, /ignored: older than the change of .* already seen/);
});

// ─── Write-back ───

linear('write-back keeps one comment through approval and finish, and moves the issue through its states', async (context) => {
  const { factory, fake } = context;
  const gate = await factory.pipeline([shell('plan', 'echo "planning {{issue.key}}"'), approval('review', 'Ship {{issue.key}}?'), shell('ship', 'echo shipped; echo "all done"')], { name: 'Gated' });
  const saved = await trigger(context, { pipelineId: gate.id, writeBack: { comment: true, states: { started: 'In Progress', succeeded: 'In Review', failed: 'Todo' } } });
  const issue = fake.addIssue({ title: 'Write back please' });
  assert.is((await deliver(context, saved.id, 'create', issue)).status, 201);
  const run = (await factory.api.listRuns())[0]!;
  await factory.waitForRun(run.id, ['waiting']);
  await waitFor(() => fake.commentsOn(issue)[0]?.body.includes('waiting for approval') ?? false, 5000, 'the waiting comment');
  const waitingBody = fake.commentsOn(issue)[0]!.body;
  assert.ok(waitingBody.startsWith(`**Factory** · run \` ${run.id} \``), 'the first line names the run');
  assert.match(waitingBody, /waiting for approval at ` review `: ` Ship ENG-1\? `/);
  assert.is(issue.state.name, 'In Progress');
  await factory.api.approveStep(run.id, 'review', true);
  await factory.waitForRun(run.id, ['succeeded']);
  await waitFor(() => fake.commentsOn(issue)[0]?.body.includes('succeeded') ?? false, 5000, 'the finished comment');
  await waitFor(() => issue.state.name === 'In Review', 5000, 'the succeeded state');
  assert.is(fake.commentsOn(issue).length, 1, 'one comment, edited in place');
  const body = fake.commentsOn(issue)[0]!.body;
  assert.match(body, /Status: ✓ succeeded in \d/);
  assert.match(body, /Output of ` ship `:\n\n```\nshipped\nall done\n```/);
  assert.is(fake.callsOf('commentCreate').length, 1);

  // A retry of the run edits the same comment.
  await factory.api.retryRun(run.id);
  await factory.waitForRun(run.id, ['waiting']);
  await waitFor(() => fake.commentsOn(issue)[0]!.body.includes('waiting for approval'), 5000, 'the retried comment');
  assert.is(fake.commentsOn(issue).length, 1);
  const log = await factory.api.readRunLog(run.id);
  assert.ok(log.some((line) => line.line.startsWith(`Commented on ${issue.identifier}`)));
});

linear('write-back failures are logged on the run and the ledger, retried, and never fail the run', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context, { writeBack: { comment: true } });
  const issue = fake.addIssue({ title: 'Flaky Linear' });
  fake.script(linearErrors.internal(), (call) => call.fields.includes('issue'));
  fake.script(linearErrors.internal(), (call) => call.fields.includes('issue'));
  assert.is((await deliver(context, saved.id, 'create', issue)).status, 201);
  const run = (await factory.api.listRuns())[0]!;
  const done = await factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded');
  await waitFor(() => fake.commentsOn(issue)[0]?.body.includes('succeeded') ?? false, 5000, 'the comment after the retries');
  assert.is(fake.commentsOn(issue).length, 1);
  const entries = await ledger(context, saved.id);
  assert.ok(entries.some((entry) => /write-back failed: Linear: Internal server error; trying again in 50 ms/.test(entry)));
  const log = await factory.api.readRunLog(run.id);
  assert.ok(log.some((line) => /^Write-back to the issue failed: Linear: Internal server error/.test(line.line)));
});

linear('no token in the snapshot, events, ledger, trigger files, logs or step environments', async (context) => {
  const { factory, fake } = context;
  const events = factory.record('snapshot');
  const env = await factory.pipeline([shell('env', 'env')], { name: 'Env' });
  const saved = await trigger(context, { pipelineId: env.id, webhookSecret: secret, writeBack: { comment: true } });
  const issue = fake.addIssue({ title: 'Show me your env' });
  await deliver(context, saved.id, 'create', issue);
  await factory.api.pollTrigger(saved.id);
  const run = (await factory.api.listRuns())[0]!;
  const done = await factory.waitForRun(run.id, ['succeeded']);
  await waitFor(() => fake.commentsOn(issue).length === 1 && fake.commentsOn(issue)[0]!.body.includes('succeeded'), 5000, 'the comment');
  await factory.stop();
  const configured = [JSON.stringify(await factory.api.snapshot()), JSON.stringify(events)];
  const folder = (path: string): string[] => readdirSync(path, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? folder(join(path, entry.name)) : [readFileSync(join(path, entry.name), 'utf8')]));
  const recorded = [JSON.stringify(done), JSON.stringify(await factory.api.readRunLog(run.id)), ...folder(join(factory.dir, 'runs')), ...folder(join(factory.dir, 'triggers'))];
  for (const text of [...configured, ...recorded]) assert.not.ok(text.includes(fake.apiKey), 'the API key');
  // The webhook secret is shown to its owner in the trigger editor (the snapshot), and nowhere else.
  for (const text of recorded) assert.not.ok(text.includes(secret), 'the webhook secret');
  assert.ok(done.steps[0]!.output!.includes('FACTORY_ISSUE_TITLE=Show me your env'), `the environment was printed: ${done.steps[0]!.output}`);
});

linear.run();

const schedule = suite('linear polling schedule');

schedule('a saved trigger polls by itself soon, then every interval (jittered); a disabled one does not', async () => {
  const fake = await FakeLinear.start();
  const factory = await startTestFactory({ triggerTuning: { firstPollDelayMs: 50 } });
  try {
    const account = await factory.api.saveConnection({ kind: 'linear', name: 'Acme', baseUrl: fake.url, token: fake.apiKey });
    const pipeline = await factory.pipeline([shell('say', 'echo hi')]);
    fake.addIssue({ title: 'Found by the schedule' });
    const input: TriggerInput = { name: 'Timed', kind: 'linear', enabled: false, pipelineId: pipeline.id, connectionId: account.id, filter: { team: 'ENG' }, pollIntervalSec: 15 };
    const off = await factory.api.saveTrigger(input);
    // The poller arms a trigger's timer only where it sets nextPollAt (plan): none means no poll will come.
    assert.is((await factory.api.snapshot()).triggerStates[off.id]!.nextPollAt, undefined, 'a disabled trigger has no poll planned');
    assert.is(fake.callsOf('issues').length, 0, 'a disabled trigger does not poll');
    await factory.api.saveTrigger({ ...off, enabled: true });
    await waitFor(() => fake.callsOf('issues').length === 1, 3000, 'the first poll');
    await waitFor(async () => (await factory.api.listRuns()).length === 1, 3000, 'its run');
    const state = (await factory.api.snapshot()).triggerStates[off.id]!;
    const wait = state.nextPollAt! - state.lastPollAt!;
    assert.ok(wait >= 13_500 && wait <= 16_500, `the next poll in 15 s ± 10% (${wait} ms)`);
  } finally {
    await factory.close();
    await fake.stop();
  }
});

schedule.run();
