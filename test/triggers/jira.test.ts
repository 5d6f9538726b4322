// Jira end to end: the production provider against a fake Jira (a real REST server on 127.0.0.1
// in Cloud and Data Center modes), with a real Factory, real runs and the real webhook server;
// and the ADF reader on its own.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionView, TriggerConfig, TriggerInput } from '../../src/core/api';
import { adfToText, jiraProvider } from '../../src/triggers/providers/jira';
import { FakeJira } from '../fakes/jira';
import { rejects } from '../helpers/assert';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { waitFor } from '../helpers/temp';

const adf = suite('jira adf');

adf('ADF descriptions become readable text: paragraphs, lists, code blocks, links kept as text', () => {
  const doc = {
    type: 'doc', version: 1, content: [
      { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Steps' }] },
      { type: 'paragraph', content: [{ type: 'text', text: 'Open ' }, { type: 'text', text: 'the page', marks: [{ type: 'link', attrs: { href: 'https://example.com/login' } }] }, { type: 'hardBreak' }, { type: 'text', text: 'then sign in as ' }, { type: 'mention', attrs: { id: '1', text: '@Ada' } }] },
      { type: 'orderedList', content: [
        { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'first' }] }] },
        { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'second' }] }, { type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'nested' }] }] }] }] },
      ] },
      { type: 'codeBlock', attrs: { language: 'js' }, content: [{ type: 'text', text: 'login(user)\nassert(ok)' }] },
      { type: 'blockquote', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'quoted' }] }] },
      { type: 'paragraph', content: [{ type: 'inlineCard', attrs: { url: 'https://example.com/card' } }] },
    ],
  };
  assert.is(adfToText(doc), [
    'Steps',
    'Open the page (https://example.com/login)\nthen sign in as @Ada',
    '1. first\n2. second\n  - nested',
    '```\nlogin(user)\nassert(ok)\n```',
    '> quoted',
    'https://example.com/card',
  ].join('\n\n'));
  assert.is(adfToText(null), '');
  assert.is(adfToText({ type: 'doc', content: 'not a list' }), '');
});

adf.run();

interface Context {
  factory: TestFactory;
  fake: FakeJira;
  account: ConnectionView;
  hooks: string;
  pipelineId: string;
}

const secret = 'jira-shared-secret-0123456789';

function jiraSuite(name: string, mode: 'cloud' | 'datacenter') {
  const jira = suite<Context>(name);
  jira.before.each(async (context) => {
    const port = await freePort();
    context.fake = await FakeJira.start({ mode });
    context.factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } }, triggerTuning: { firstPollDelayMs: 3600_000, writeBackRetryDelaysMs: [50, 50] } });
    context.hooks = `http://127.0.0.1:${port}/hooks`;
    context.account = await context.factory.api.saveConnection({ kind: 'jira', name: 'Acme', baseUrl: context.fake.url, token: context.fake.token, ...(mode === 'cloud' ? { email: context.fake.email } : {}) });
    const pipeline = await context.factory.pipeline([shell('say', 'echo "{{issue.key}} | {{issue.title}} | {{issue.description}} | {{issue.labels}} | {{issue.priority}} | {{issue.source}} | {{issue.url}}"')]);
    context.pipelineId = pipeline.id;
  });
  jira.after.each(async (context) => {
    await context.factory.close();
    await context.fake.stop();
  });
  return jira;
}

function trigger(context: Context, extra: Partial<TriggerInput> = {}): Promise<TriggerConfig> {
  return context.factory.api.saveTrigger({ name: 'Jira issues', kind: 'jira', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter: { query: 'project = KAN AND statusCategory != Done' }, webhookSecret: secret, ...extra });
}

async function runKeys(context: Context): Promise<string[]> {
  return (await context.factory.api.listRuns({ limit: 1000 })).map((run) => run.issue!.key!).sort();
}

function ledger(context: Context, triggerId: string): Promise<string[]> {
  return context.factory.api.snapshot().then((snapshot) => snapshot.triggerStates[triggerId]!.ledger.map((entry) => `${entry.key ?? ''} ${entry.decision.replace(/run_\w+/, 'run_…')}`.trim()));
}

// ─── Cloud ───

const cloud = jiraSuite('jira cloud', 'cloud');

cloud('a Cloud account signs in with email and API token (Basic) and says it is Jira Cloud; bad credentials and a missing email are clear', async ({ factory, fake, account }) => {
  assert.equal(account.account, { id: fake.me.accountId, name: fake.me.displayName, email: fake.me.emailAddress, server: 'Jira Cloud' });
  const call = fake.calls.find((candidate) => candidate.path === '/rest/api/3/myself')!;
  assert.is(call.headers.authorization, `Basic ${Buffer.from(`${fake.email}:${fake.token}`).toString('base64')}`);
  const bad = await factory.api.testConnection({ kind: 'jira', name: 'x', baseUrl: fake.url, email: fake.email, token: 'wrong' });
  assert.is(bad.ok, false);
  assert.match(bad.error!, /^Jira refused the credentials \(HTTP 401\): \S/);
  assert.not.match(bad.error!, /<\w+/, 'no HTML in the error');
  const noEmail = await factory.api.testConnection({ kind: 'jira', name: 'x', baseUrl: fake.url, token: fake.token });
  assert.equal(noEmail, { ok: false, error: 'Jira Cloud signs in with the email of the account and an API token: enter the email', fields: [{ field: 'email', message: 'Jira Cloud signs in with the email of the account and an API token: enter the email' }] });
  const noSite = await factory.api.testConnection({ kind: 'jira', name: 'x', email: fake.email, token: fake.token });
  assert.match(noSite.error!, /^The site address is empty: enter the Jira site/);
});

cloud('the JQL is checked when saved with Jira’s own error; the preview lists what matches', async (context) => {
  const { factory, fake } = context;
  await rejects(trigger(context, { filter: { query: 'project = KAN AND' } }), /^Jira: Error in the JQL Query/m);
  await rejects(trigger(context, { filter: { query: 'nosuch = 1' } }), /^Jira: Field 'nosuch' does not exist/m);
  await rejects(trigger(context, { filter: {} }), /^The JQL query is empty: enter one/m);
  fake.addIssue({ summary: 'Open one', labels: ['agent'] });
  fake.addIssue({ summary: 'Finished', status: 'Done' });
  fake.addIssue({ summary: 'Elsewhere', project: 'ABC' });
  const preview = await factory.api.testTrigger({ name: 'j', kind: 'jira', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter: { query: 'project = KAN AND statusCategory != Done ORDER BY created ASC' } });
  assert.equal(preview.issues.map((issue) => issue.title), ['Open one']);
  assert.is(preview.issues[0]!.url, `${fake.url}/browse/${preview.issues[0]!.key}`);
});

cloud('polls use /search/jql with fields, follow nextPageToken until it is absent, and ask for recent changes later', async (context) => {
  const { factory, fake } = context;
  for (let index = 1; index <= 230; index++) fake.addIssue({ summary: `Issue ${index}`, description: `Body ${index}`, priority: 'High', labels: ['agent'] });
  const saved = await trigger(context);
  const checked = fake.calls.length;
  const state = await factory.api.pollTrigger(saved.id);
  assert.is(state.lastError, undefined);
  const searches = fake.calls.slice(checked).filter((call) => call.path === '/rest/api/3/search/jql');
  assert.is(searches.length, 3, '230 issues in pages of 100');
  assert.ok(searches.every((call) => call.query.fields?.includes('summary')), 'fields always sent');
  assert.ok(fake.calls.every((call) => call.path !== '/rest/api/3/search'), 'never the removed /search');
  assert.is((await runKeys(context)).length, 230);
  const run = await factory.waitForRun((await factory.api.listRuns({ limit: 1000 })).at(-1)!.id, ['succeeded', 'failed']);
  assert.match(run.steps[0]!.output!, /^KAN-\d+ \| Issue \d+ \| Body \d+ \| agent \| High \| jira \| http:\/\/127\.0\.0\.1:\d+\/browse\/KAN-\d+\n$/);

  fake.addIssue({ summary: 'A new one' });
  await factory.api.pollTrigger(saved.id);
  const incremental = fake.calls.filter((call) => call.path === '/rest/api/3/search/jql').at(-1)!;
  assert.match(incremental.query.jql!, /^\(project = KAN AND statusCategory != Done\) AND updated >= "-\d+m" ORDER BY updated DESC$/);
  assert.is((await runKeys(context)).length, 231);
});

cloud('webhooks: the shared token (query, header, bearer) or X-Hub-Signature; created and updated start runs, other events are ignored; a retry starts nothing', async (context) => {
  const { fake } = context;
  const saved = await trigger(context, { filter: { query: 'project = KAN', labels: ['agent'] } });
  const url = `${context.hooks}/${saved.id}`;
  const issue = fake.addIssue({ summary: 'Hooked', labels: ['agent'] });
  assert.equal(await fake.deliver(url, fake.payload('jira:issue_created', issue)), { status: 401, body: { error: 'invalid signature' } });
  assert.is((await fake.deliver(url, fake.payload('jira:issue_created', issue), { token: 'wrong' })).status, 401);
  const identifier = 'a9f5c7e0-1234-4c8b-9f00-000000000001';
  assert.equal(await fake.deliver(url, fake.payload('jira:issue_created', issue), { token: secret, identifier }), { status: 201, body: { issue: issue.key, created: true } });
  assert.equal(await fake.deliver(url, fake.payload('jira:issue_created', issue), { token: secret, identifier, retry: 1 }), { status: 200, body: { issue: issue.key, created: false } });
  assert.match((await ledger(context, saved.id))[0]!, /already processed: delivery .* was decided before/);
  const signed = fake.addIssue({ summary: 'Signed', labels: ['agent'] });
  assert.is((await fake.deliver(url, fake.payload('jira:issue_created', signed), { secret })).status, 201);
  const bearer = fake.addIssue({ summary: 'Bearer', labels: ['agent'] });
  assert.is((await fake.deliver(url, fake.payload('jira:issue_created', bearer), { headers: { Authorization: `Bearer ${secret}` } })).status, 201);
  fake.addComment(issue, 'A comment');
  assert.equal(await fake.deliver(url, fake.payload('comment_created', issue), { token: secret }), { status: 202, body: { ignored: true } });
  assert.equal(await fake.deliver(url, fake.payload('jira:issue_deleted', issue), { token: secret }), { status: 202, body: { ignored: true } });
  const notJira = await fake.deliver(url, { hello: 'world' }, { token: secret });
  assert.equal(notJira, { status: 400, body: { error: 'not a Jira webhook: it needs webhookEvent' } });
  const elsewhere = fake.addIssue({ summary: 'Another project', project: 'ABC', labels: ['agent'] });
  assert.is((await fake.deliver(url, fake.payload('jira:issue_created', elsewhere), { token: secret })).status, 202, 'the project the query names is checked on events');
  const done = fake.addIssue({ summary: 'Done already', status: 'Done', labels: ['agent'] });
  const narrow = await trigger(context, { filter: { query: 'project = KAN AND statusCategory != Done', labels: ['agent'] } });
  assert.is((await fake.deliver(`${context.hooks}/${narrow.id}`, fake.payload('jira:issue_created', done), { token: secret })).status, 201, 'the rest of the query is not checked on events (spec)');
  assert.equal(await runKeys(context), [issue.key, signed.key, bearer.key, done.key].sort());
});

cloud('webhooks: the label filter, with labels read from the changelog; a label removed and added back starts a new run', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context, { filter: { query: 'project = KAN', labels: ['agent'] } });
  const url = `${context.hooks}/${saved.id}`;
  const issue = fake.addIssue({ summary: 'Labelled later' });
  assert.equal(await fake.deliver(url, fake.payload('jira:issue_created', issue), { token: secret }), { status: 202, body: { ignored: true } });
  let changelog = fake.update(issue, { labels: ['agent', 'backend'] });
  assert.is((await fake.deliver(url, fake.payload('jira:issue_updated', issue, changelog), { token: secret })).status, 201);
  changelog = fake.update(issue, { labels: ['backend'] });
  assert.is((await fake.deliver(url, fake.payload('jira:issue_updated', issue, changelog), { token: secret })).status, 202);
  assert.is((await ledger(context, saved.id))[0], `${issue.key} left the filter (the label agent was removed): its next match starts a new run`);
  changelog = fake.update(issue, { labels: ['backend', 'agent'] });
  assert.is((await fake.deliver(url, fake.payload('jira:issue_updated', issue, changelog), { token: secret })).status, 201);
  assert.is((await factory.api.listRuns()).length, 2);
  // Labels that come only in the changelog, as one space-joined string.
  const bare = fake.payload('jira:issue_updated', issue, fake.update(issue, { summary: 'Renamed', labels: ['agent'] })) as { issue: { fields: Record<string, unknown> } };
  delete bare.issue.fields.labels;
  assert.is((await fake.deliver(url, bare, { token: secret })).status, 200);
});

cloud('write-back: one ADF comment kept current through approval and finish, found again by its run id; transitions by name', async (context) => {
  const { factory, fake } = context;
  const gate = await factory.pipeline([approval('review', 'Ship {{issue.key}}?'), shell('ship', 'echo shipped')], { name: 'Gated' });
  const saved = await trigger(context, { pipelineId: gate.id, writeBack: { comment: true, states: { started: 'In Progress', succeeded: 'Done' } } });
  const issue = fake.addIssue({ summary: 'Write back to Jira' });
  assert.is((await fake.deliver(`${context.hooks}/${saved.id}`, fake.payload('jira:issue_created', issue), { token: secret })).status, 201);
  const run = (await factory.api.listRuns())[0]!;
  await factory.waitForRun(run.id, ['waiting']);
  await waitFor(() => fake.comments(issue)[0]?.text.includes('waiting for approval') ?? false, 5000, 'the waiting comment');
  await waitFor(() => issue.status === 'In Progress', 5000, 'the start transition');
  const body = fake.comments(issue)[0]!.body as { type: string };
  assert.is(body.type, 'doc', 'an ADF body on Cloud');
  await factory.api.approveStep(run.id, 'review', true);
  await factory.waitForRun(run.id, ['succeeded']);
  await waitFor(() => fake.comments(issue)[0]?.text.includes('succeeded') ?? false, 5000, 'the finished comment');
  await waitFor(() => issue.status === 'Done', 5000, 'the done transition');
  assert.is(fake.comments(issue).length, 1);
  assert.match(fake.comments(issue)[0]!.text, new RegExp(run.id));
  assert.match(adfToText(fake.comments(issue)[0]!.body), /```\nshipped\n```/);
});

cloud('an issue that leaves the query is seen by the hourly full poll; when it comes back it starts again', async (context) => {
  const { fake } = context;
  let offset = 0;
  const factory = await startTestFactory({ triggerTuning: { firstPollDelayMs: 3600_000, now: () => Date.now() + offset } });
  try {
    const account = await factory.api.saveConnection({ kind: 'jira', name: 'Acme', baseUrl: fake.url, email: fake.email, token: fake.token });
    const pipeline = await factory.pipeline([shell('say', 'echo hi')]);
    const saved = await factory.api.saveTrigger({ name: 'J', kind: 'jira', enabled: true, pipelineId: pipeline.id, connectionId: account.id, filter: { query: 'project = KAN AND statusCategory != Done' } });
    const issue = fake.addIssue({ summary: 'Comes and goes' });
    await factory.api.pollTrigger(saved.id);
    fake.update(issue, { status: 'Done' });
    await factory.api.pollTrigger(saved.id);
    const ledgerOf = async () => (await factory.api.snapshot()).triggerStates[saved.id]!.ledger.map((entry) => entry.decision);
    assert.not.ok((await ledgerOf()).some((decision) => decision.startsWith('left the filter')), 'an incremental poll cannot see it leave');
    offset = 3600_000;
    await factory.api.pollTrigger(saved.id);
    assert.match((await ledgerOf())[0]!, /^left the filter \(no longer among the matching issues\)/);
    fake.update(issue, { status: 'To Do' });
    await factory.api.pollTrigger(saved.id);
    assert.is((await factory.api.listRuns()).length, 2);
  } finally {
    await factory.close();
  }
});

cloud('a lost comment id: the comment is found by its run id among the newest comments, not made again', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context, { writeBack: { comment: true } });
  const issue = fake.addIssue({ summary: 'Find my comment' });
  for (let index = 0; index < 120; index++) fake.addComment(issue, `Someone else ${index}`, { author: 'other' });
  const { oauth: _app, ...connection } = (await factory.api.snapshot()).accounts[0]!;
  const target = { connection: { ...connection, token: fake.token }, trigger: saved, issue: { title: issue.summary, key: issue.key } };
  const version = (words: string) => ({ runId: 'run_lost_id', header: [{ kind: 'words' as const, text: words }], blocks: [] });
  const id = await jiraProvider.upsertComment(target, version(' · working'));
  assert.is(await jiraProvider.upsertComment(target, version(' · done')), id);
  const mine = fake.comments(issue).filter((comment) => comment.text.includes('run_lost_id'));
  assert.is(mine.length, 1);
  assert.match(mine[0]!.text, /done/);
});

cloud('a 429 with Retry-After pauses polling', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context);
  fake.script({ status: 429, body: { errorMessages: ['Rate limit exceeded.'] }, headers: { 'Retry-After': '120', 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '0', 'RateLimit-Reason': 'jira-quota-tenant-based' } }, (call) => call.path.includes('/search'));
  const before = Date.now();
  const state = await factory.api.pollTrigger(saved.id);
  assert.ok(state.rateLimitedUntil! >= before + 120_000 && state.rateLimitedUntil! <= Date.now() + 120_000);
  assert.match(state.lastError!, /Jira's rate limit was reached: Rate limit exceeded/);
});

cloud.run();

// ─── Data Center ───

const datacenter = jiraSuite('jira data center', 'datacenter');

datacenter('a Data Center account uses a personal access token (Bearer) and REST v2, and says which it is', async ({ fake, account }) => {
  assert.match(account.account!.server!, /^Jira Data Center/);
  const call = fake.calls.find((candidate) => candidate.path === '/rest/api/2/myself')!;
  assert.is(call.headers.authorization, `Bearer ${fake.token}`);
  assert.ok(fake.calls.every((candidate) => !candidate.path.startsWith('/rest/api/3')), 'Data Center has no v3');
});

datacenter('polls page with startAt; descriptions are plain strings; the comment is wiki text', async (context) => {
  const { factory, fake } = context;
  for (let index = 1; index <= 150; index++) fake.addIssue({ summary: `DC issue ${index}`, description: `Plain *wiki* text ${index}` });
  const gate = await factory.pipeline([shell('ship', 'echo "{{issue.description}}"')], { name: 'Ship' });
  const saved = await trigger(context, { pipelineId: gate.id, writeBack: { comment: true } });
  const checked = fake.calls.length;
  await factory.api.pollTrigger(saved.id);
  const searches = fake.calls.slice(checked).filter((call) => call.path === '/rest/api/2/search');
  assert.equal(searches.map((call) => call.query.startAt), ['0', '100']);
  assert.is((await runKeys(context)).length, 150);
  const first = (await factory.api.listRuns({ limit: 1000 })).at(-1)!;
  const done = await factory.waitForRun(first.id, ['succeeded']);
  assert.match(done.steps[0]!.output!, /^Plain \*wiki\* text \d+\n$/);
  const issue = fake.issues.find((candidate) => candidate.key === first.issue!.key)!;
  await waitFor(() => fake.comments(issue)[0]?.text.includes('succeeded') ?? false, 10_000, 'the comment');
  assert.is(typeof fake.comments(issue)[0]!.body, 'string');
  assert.match(String(fake.comments(issue)[0]!.body), /\{noformat\}\n/);
});

datacenter.run();
