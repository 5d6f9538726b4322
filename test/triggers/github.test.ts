// GitHub end to end: the production provider against a fake GitHub (a real REST server on
// 127.0.0.1 that checks GitHub's headers, pages with Link, answers ETags with 304 and enforces
// rate limits), with a real Factory, real runs and the real webhook server.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionView, TriggerConfig, TriggerInput } from '../../src/core/api';
import { githubProvider } from '../../src/triggers/providers/github';
import { FakeGitHub } from '../fakes/github';
import { rejects } from '../helpers/assert';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { waitFor } from '../helpers/temp';

interface Context {
  factory: TestFactory;
  fake: FakeGitHub;
  account: ConnectionView;
  hooks: string;
  pipelineId: string;
}

const github = suite<Context>('github');
const secret = 'github-webhook-secret-0123456789';
const repo = 'acme/app';

github.before.each(async (context) => {
  const port = await freePort();
  context.fake = await FakeGitHub.start();
  context.fake.addRepo(repo);
  context.factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } }, triggerTuning: { firstPollDelayMs: 3600_000, writeBackRetryDelaysMs: [50, 50] } });
  context.hooks = `http://127.0.0.1:${port}/hooks`;
  context.account = await context.factory.api.saveConnection({ kind: 'github', name: 'Acme', baseUrl: context.fake.url, token: context.fake.token });
  const pipeline = await context.factory.pipeline([shell('say', 'echo "{{issue.key}} | {{issue.title}} | {{issue.description}} | {{issue.labels}} | {{issue.source}} | {{issue.url}} | {{issue.raw.user.login}}"')]);
  context.pipelineId = pipeline.id;
});
github.after.each(async (context) => {
  await context.factory.close();
  await context.fake.stop();
});

function trigger(context: Context, extra: Partial<TriggerInput> = {}): Promise<TriggerConfig> {
  return context.factory.api.saveTrigger({ name: 'Repo issues', kind: 'github', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter: { repo }, webhookSecret: secret, ...extra });
}

async function runKeys(context: Context): Promise<string[]> {
  return (await context.factory.api.listRuns({ limit: 1000 })).map((run) => run.issue!.key!).sort();
}

function ledger(context: Context, triggerId: string): Promise<string[]> {
  return context.factory.api.snapshot().then((snapshot) => snapshot.triggerStates[triggerId]!.ledger.map((entry) => `${entry.key ?? ''} ${entry.decision.replace(/run_\w+/, 'run_…')}`.trim()));
}

// ─── Connections and triggers ───

github('an account is verified with GET /user, sending the headers GitHub requires', async ({ factory, fake, account }) => {
  assert.equal(account.account, { id: String(fake.user.id), name: fake.user.login, ...(account.account?.email ? { email: account.account.email } : {}) });
  const call = fake.calls.find((candidate) => candidate.path.endsWith('/user'))!;
  assert.is(call.headers.authorization, `Bearer ${fake.token}`);
  assert.is(call.headers.accept, 'application/vnd.github+json');
  assert.is(call.headers['x-github-api-version'], '2022-11-28');
  assert.match(String(call.headers['user-agent']), /Factory/);
  const bad = await factory.api.testConnection({ kind: 'github', name: 'x', baseUrl: fake.url, token: 'ghp_wrong' });
  assert.equal(bad, { ok: false, error: 'GitHub refused the token: Bad credentials' });
  assert.not.ok(JSON.stringify(await factory.api.snapshot()).includes(fake.token));
});

github('GitHub Enterprise Server: the API root under /api/v3 works the same', async ({ factory }) => {
  const enterprise = await FakeGitHub.start({ enterprise: true });
  try {
    enterprise.addRepo(repo);
    enterprise.addIssue(repo, { title: 'On our own server' });
    assert.match(enterprise.url, /\/api\/v3$/);
    const account = await factory.api.saveConnection({ kind: 'github', name: 'GHES', baseUrl: enterprise.url, token: enterprise.token });
    const preview = await factory.api.testTrigger({ name: 'g', kind: 'github', enabled: true, pipelineId: (await factory.api.snapshot()).pipelines[0]!.id, connectionId: account.id, filter: { repo } });
    assert.equal(preview.issues.map((issue) => issue.title), ['On our own server']);
    assert.ok(enterprise.calls.every((call) => call.path.startsWith('/api/v3/')));
  } finally {
    await enterprise.stop();
  }
});

github('the repository is checked when saved; a missing scope is named', async (context) => {
  const { fake } = context;
  await rejects(trigger(context, { filter: {} }), /^The repository filter must be a repository as owner\/name/m);
  await rejects(trigger(context, { filter: { repo: 'acme/secret' } }), /^GitHub has no repository `acme\/secret` that this token can read/m);
  await rejects(trigger(context, { filter: { repo, assignee: 'not a login!' } }), /^The assignee filter must be me, none or a GitHub login/m);
  fake.script({ status: 403, body: { message: 'Resource not accessible by personal access token' }, headers: { 'x-accepted-github-permissions': 'issues=read', 'x-oauth-scopes': '' } }, (call) => call.path === `/repos/${repo}`);
  await rejects(trigger(context), /GitHub refused: Resource not accessible by personal access token \(this needs issues=read; the token has no scopes\)/);
});

// ─── Polling ───

github('the first poll lists open issues page by page, skips pull requests, and filters labels and assignees', async (context) => {
  const { factory, fake } = context;
  for (let index = 1; index <= 120; index++) fake.addIssue(repo, { title: `Issue ${index}`, labels: index % 3 === 0 ? ['agent'] : ['other'] });
  fake.addIssue(repo, { title: 'A pull request', pullRequest: true, labels: ['agent'] });
  fake.addIssue(repo, { title: 'Closed', state: 'closed', labels: ['agent'] });
  const saved = await trigger(context, { filter: { repo, labels: ['agent', 'urgent'] } });
  const state = await factory.api.pollTrigger(saved.id);
  assert.is(state.lastError, undefined);
  const lists = fake.calls.filter((call) => call.path === `/repos/${repo}/issues`);
  assert.is(lists.length, 2, '122 items in pages of 100, following Link');
  assert.equal([lists[0]!.query.state, lists[0]!.query.sort, lists[0]!.query.direction, lists[0]!.query.per_page], ['open', 'updated', 'desc', '100']);
  assert.is((await runKeys(context)).length, 40);
  const run = (await factory.api.listRuns())[0]!;
  assert.match(run.issue!.key!, /^acme\/app#\d+$/);

  const mine = fake.addIssue(repo, { title: 'Mine', assignees: [fake.user.login] });
  const theirs = fake.addIssue(repo, { title: 'Theirs', assignees: ['someone-else'] });
  const nobodys = fake.addIssue(repo, { title: 'Nobody’s' });
  const cases: [TriggerInput['filter'], string[]][] = [
    [{ repo, assignee: 'me' }, [mine.title]],
    [{ repo, assignee: 'someone-else' }, [theirs.title]],
  ];
  for (const [filter, titles] of cases) {
    const preview = await factory.api.testTrigger({ name: 'g', kind: 'github', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter });
    assert.equal(preview.issues.map((issue) => issue.title).sort(), titles.sort(), JSON.stringify(filter));
  }
  const none = await factory.api.testTrigger({ name: 'g', kind: 'github', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter: { repo, assignee: 'none' } });
  assert.ok(none.issues.some((issue) => issue.title === nobodys.title));
  assert.not.ok(none.issues.some((issue) => issue.title === mine.title || issue.title === 'A pull request'));
});

github('incremental polls ask since the newest change; an idle repository answers 304 and costs no rate limit', async (context) => {
  const { factory, fake } = context;
  const first = fake.addIssue(repo, { title: 'First' });
  const saved = await trigger(context);
  await factory.api.pollTrigger(saved.id);
  const later = fake.addIssue(repo, { title: 'Later' });
  await factory.api.pollTrigger(saved.id);
  const incremental = fake.calls.filter((call) => call.path === `/repos/${repo}/issues`).at(-1)!;
  assert.equal([incremental.query.state, typeof incremental.query.since], ['all', 'string']);
  assert.equal(await runKeys(context), [`${repo}#${first.number}`, `${repo}#${later.number}`].sort());
  await factory.api.pollTrigger(saved.id);
  const remaining = fake.rateLimit.remaining;
  const idle = await factory.api.pollTrigger(saved.id);
  const last = fake.calls.at(-1)!;
  assert.ok(last.headers['if-none-match'], 'a conditional request');
  assert.is(last.status, 304);
  assert.is(fake.rateLimit.remaining, remaining, 'a 304 costs nothing');
  assert.is(idle.lastError, undefined);
  fake.update(first, { title: 'First, edited' });
  await factory.api.pollTrigger(saved.id);
  assert.is(fake.calls.at(-1)!.status, 200, 'a change is seen again');
});

github('rate limits pause polling until they lift: the primary limit and a secondary one with retry-after', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context);
  const reset = Math.floor(Date.now() / 1000) + 600;
  fake.script({ status: 403, body: { message: 'API rate limit exceeded for user ID 1.' }, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } });
  const primary = await factory.api.pollTrigger(saved.id);
  assert.is(primary.rateLimitedUntil, reset * 1000);
  assert.match(primary.lastError!, /GitHub's rate limit was reached: API rate limit exceeded/);
  const calls = fake.calls.length;
  await factory.api.pollTrigger(saved.id);
  assert.is(fake.calls.length, calls, 'no request while limited');

  await factory.api.resetTrigger(saved.id);
  const other = await trigger(context, { name: 'Second' });
  fake.script({ status: 429, body: { message: 'You have exceeded a secondary rate limit.' }, headers: { 'retry-after': '90' } });
  const before = Date.now();
  const secondary = await factory.api.pollTrigger(other.id);
  assert.ok(secondary.rateLimitedUntil! >= before + 90_000 && secondary.rateLimitedUntil! <= Date.now() + 90_000);
});

// ─── Webhooks ───

github('webhook: ping is 200 ok; issues events start runs; a redelivery starts nothing; pull requests and other repositories are ignored', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context);
  const url = `${context.hooks}/${saved.id}`;
  assert.equal(await fake.deliver(url, 'ping', fake.payload('ping'), { secret }), { status: 200, body: { ok: true } });
  const issue = fake.addIssue(repo, { title: 'From a webhook', body: 'Body text', labels: ['agent'] });
  const deliveryId = '72d3162e-cc78-11e3-81ab-4c9367dc0958';
  const opened = await fake.deliver(url, 'issues', fake.payload('issues', 'opened', issue), { secret, deliveryId });
  assert.equal(opened, { status: 201, body: { issue: `${repo}#${issue.number}`, created: true } });
  assert.equal(await fake.deliver(url, 'issues', fake.payload('issues', 'opened', issue), { secret, deliveryId }), { status: 200, body: { issue: `${repo}#${issue.number}`, created: false } });
  const pull = fake.addIssue(repo, { title: 'A pull request', pullRequest: true });
  assert.equal(await fake.deliver(url, 'pull_request', fake.payload('pull_request', 'opened', pull), { secret }), { status: 202, body: { ignored: true } });
  assert.equal(await fake.deliver(url, 'issue_comment', fake.payload('issue_comment', 'created', pull), { secret }), { status: 202, body: { ignored: true } });
  const elsewhere = { ...fake.payload('issues', 'opened', issue), repository: { full_name: 'acme/other', name: 'other', owner: { login: 'acme' } } };
  assert.equal(await fake.deliver(url, 'issues', elsewhere, { secret }), { status: 202, body: { ignored: true } });
  assert.equal((await ledger(context, saved.id)).slice(0, 3), ['ignored: an event of another repository (acme/other)', 'ignored: a comment on a pull request', 'ignored: a pull request']);
  const run = await factory.waitForRun((await factory.api.listRuns())[0]!.id, ['succeeded', 'failed']);
  assert.is(run.steps[0]!.output, `${repo}#${issue.number} | From a webhook | Body text | agent | github | ${issue.html_url} | ${issue.user.login}\n`);
});

github('webhook: signatures (wrong, missing, wrong length), a body that is not GitHub’s, and the form-encoded content type', async (context) => {
  const { fake } = context;
  const saved = await trigger(context);
  const url = `${context.hooks}/${saved.id}`;
  const issue = fake.addIssue(repo, { title: 'Signed' });
  const payload = fake.payload('issues', 'opened', issue);
  assert.equal(await fake.deliver(url, 'issues', payload, { secret: 'wrong' }), { status: 401, body: { error: 'invalid signature' } });
  assert.is((await fake.deliver(url, 'issues', payload, { signature: null })).status, 401);
  assert.is((await fake.deliver(url, 'issues', payload, { signature: 'sha256=abc' })).status, 401);
  const notJson = await fetch(url, { method: 'POST', headers: { 'X-GitHub-Event': 'issues', 'X-Hub-Signature-256': sign('not json') }, body: 'not json' });
  assert.is(notJson.status, 400);
  assert.match(((await notJson.json()) as { error: string }).error, /^the body is not JSON/);
  const noEvent = await fetch(url, { method: 'POST', headers: { 'X-Hub-Signature-256': sign('{}') }, body: '{}' });
  assert.equal([noEvent.status, await noEvent.json()], [400, { error: 'not a GitHub webhook: the X-GitHub-Event header is missing' }]);
  assert.equal(await fake.deliver(url, 'issues', payload, { secret, form: true }), { status: 201, body: { issue: `${repo}#${issue.number}`, created: true } });
});

github('re-trigger: unlabeled, closed and reopened issues leave and enter the filter, by webhook and by poll', async (context) => {
  const { factory, fake } = context;
  const saved = await trigger(context, { filter: { repo, labels: ['agent'] } });
  const url = `${context.hooks}/${saved.id}`;
  const issue = fake.addIssue(repo, { title: 'Back and forth', labels: ['agent'] });
  assert.is((await fake.deliver(url, 'issues', fake.payload('issues', 'opened', issue), { secret })).status, 201);
  fake.update(issue, { labels: [] });
  assert.is((await fake.deliver(url, 'issues', fake.payload('issues', 'unlabeled', issue, { label: 'agent' }), { secret })).status, 202);
  fake.update(issue, { labels: ['agent'] });
  assert.is((await fake.deliver(url, 'issues', fake.payload('issues', 'labeled', issue, { label: 'agent' }), { secret })).status, 201);
  fake.update(issue, { state: 'closed' });
  assert.is((await fake.deliver(url, 'issues', fake.payload('issues', 'closed', issue), { secret })).status, 202);
  assert.match((await ledger(context, saved.id))[0]!, /left the filter \(closed\)/);
  fake.update(issue, { state: 'open' });
  assert.is((await fake.deliver(url, 'issues', fake.payload('issues', 'reopened', issue), { secret })).status, 201);
  assert.is((await factory.api.listRuns()).length, 3);
  // By polling: closed between two polls, then reopened.
  await factory.api.pollTrigger(saved.id);
  await factory.api.pollTrigger(saved.id);
  fake.update(issue, { state: 'closed' });
  await factory.api.pollTrigger(saved.id);
  fake.update(issue, { state: 'open' });
  await factory.api.pollTrigger(saved.id);
  assert.is((await factory.api.listRuns()).length, 4);
});

// ─── Write-back ───

github('write-back keeps one comment, its first line naming the run, through approval and finish, and moves the labels', async (context) => {
  const { factory, fake } = context;
  const gate = await factory.pipeline([approval('review', 'Ship {{issue.key}}?'), shell('ship', 'echo shipped')], { name: 'Gated' });
  const saved = await trigger(context, { pipelineId: gate.id, writeBack: { comment: true, labels: { started: 'factory: working', succeeded: 'factory: done', failed: 'factory: failed' } } });
  const issue = fake.addIssue(repo, { title: 'Label me', labels: ['agent'] });
  assert.is((await fake.deliver(`${context.hooks}/${saved.id}`, 'issues', fake.payload('issues', 'opened', issue), { secret })).status, 201);
  const run = (await factory.api.listRuns())[0]!;
  await factory.waitForRun(run.id, ['waiting']);
  await waitFor(() => fake.comments(repo, issue.number)[0]?.body.includes('waiting for approval') ?? false, 5000, 'the waiting comment');
  assert.equal(fake.labelsOf(issue).sort(), ['agent', 'factory: working']);
  await factory.api.approveStep(run.id, 'review', true);
  await factory.waitForRun(run.id, ['succeeded']);
  await waitFor(() => fake.comments(repo, issue.number)[0]?.body.includes('succeeded') ?? false, 5000, 'the finished comment');
  await waitFor(() => fake.labelsOf(issue).includes('factory: done'), 5000, 'the done label');
  assert.equal(fake.labelsOf(issue).sort(), ['agent', 'factory: done'], 'the started label was removed');
  const comments = fake.comments(repo, issue.number);
  assert.is(comments.length, 1);
  assert.ok(comments[0]!.body.startsWith(`**Factory** · run \` ${run.id} \``), 'the first line names the run');
});

github('a comment whose id was lost is found by its marker and edited, not made again', async (context) => {
  const { factory, fake } = context;
  await trigger(context);
  const issue = fake.addIssue(repo, { title: 'Found again' });
  for (let index = 0; index < 120; index++) fake.addComment?.(repo, issue.number, `Someone else’s comment ${index}`);
  const connection = { ...context.account, token: fake.token, id: context.account.id } as never;
  const config = (await factory.api.snapshot()).triggers[0]!;
  const target = { connection, trigger: config, issue: { title: issue.title, key: `${repo}#${issue.number}`, raw: { number: issue.number } } };
  const version = (words: string) => ({ runId: 'run_found_again', header: [], blocks: [{ kind: 'paragraph' as const, parts: [{ kind: 'words' as const, text: words }] }] });
  const id = await githubProvider.upsertComment(target, version('First version'));
  const again = await githubProvider.upsertComment(target, version('Second version'));
  assert.is(again, id);
  const mine = fake.comments(repo, issue.number).filter((comment) => comment.body.includes('run_found_again'));
  assert.is(mine.length, 1);
  assert.ok(mine[0]!.body.endsWith('Second version'));
});

function sign(body: string): string {
  const { createHmac } = require('node:crypto') as typeof import('node:crypto');
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

github.run();
