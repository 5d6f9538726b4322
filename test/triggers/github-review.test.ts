// The review loop end to end: a 'github-review' trigger of a real Factory against the fake GitHub
// (reviews, review comments, collaborator permission, ETags), fed GitHub's own example payloads
// (github-review-payloads.ts) signed with X-Hub-Signature-256 through the real webhook server. The
// pull request Factory opened is a finished run whose pullRequest step recorded it: made by a real
// run, then written into its run.json while Factory was stopped, as the runner would have.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionView, Run, TriggerConfig, TriggerInput } from '../../src/core/api';
import { FakeGitHub, type FakeGitHubIssue } from '../fakes/github';
import { rejects } from '../helpers/assert';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';
import { aimed, pullRequestClosed, pullRequestCommentCreated, reviewCommentCreated, reviewSubmitted, type PullTarget } from './github-review-payloads';

interface Context {
  dir: string;
  factory: TestFactory;
  fake: FakeGitHub;
  account: ConnectionView;
  hooks: string;
  pipelineId: string;
  /** The run whose pullRequest step opened `pull`. */
  opener: Run;
  pull: FakeGitHubIssue;
  target: PullTarget;
}

const reviews = suite<Context>('github-review');
const secret = 'github-review-secret-0123456789';
const repo = 'acme/app';
const reviewer = { login: 'Codertocat', id: 21031067 };
const exampleReviewId = 237895671;
const exampleCommentId = 284312630;

reviews.before.each(async (context) => {
  const port = await freePort();
  const overrides = { webhookServer: { enabled: true, port } };
  context.dir = makeTempDir('factory-review');
  context.fake = await FakeGitHub.start();
  context.fake.addRepo(repo);
  context.fake.setRole(repo, reviewer.login, 'write');
  // A run that "opened" the pull request: real, finished, then given its pullRequest step's record.
  const first = await startTestFactory({ dir: context.dir, overrides });
  const opening = await first.pipeline([shell('push', 'true')], { name: 'Feature' });
  const run = await first.api.startRun({ pipelineId: opening.id, issue: { title: 'Fix the login', key: 'ENG-1' } });
  await first.waitForRun(run.id, ['succeeded']);
  await first.close();
  const branch = `factory/${run.id}`;
  context.pull = context.fake.addIssue(repo, { title: 'ENG-1 Fix the login', pullRequest: true, head: branch, author: context.fake.user.login });
  const file = join(context.dir, 'runs', run.id, 'run.json');
  const stored = JSON.parse(readFileSync(file, 'utf8'));
  stored.steps[0].pullRequest = { number: context.pull.number, url: context.pull.html_url, repository: repo, branch, state: 'open' };
  stored.pipeline.steps[0] = { id: 'push', name: 'push', kind: 'pullRequest', connectionId: 'con_x', remote: 'upstream' };
  writeFileSync(file, JSON.stringify(stored));
  context.target = { repo, number: context.pull.number, head: branch, title: context.pull.title, htmlUrl: context.pull.html_url };

  context.factory = await startTestFactory({ dir: context.dir, overrides, triggerTuning: { firstPollDelayMs: 3600_000 } });
  context.opener = (await context.factory.api.getRun(run.id))!;
  context.hooks = `http://127.0.0.1:${port}/hooks`;
  context.account = await context.factory.api.saveConnection({ kind: 'github', name: 'Acme', baseUrl: context.fake.url, token: context.fake.token });
  const answering = await context.factory.pipeline([shell('answer', 'true')], { name: 'Review' });
  context.pipelineId = answering.id;
});
reviews.after.each(async (context) => {
  await context.factory.close();
  await context.fake.stop();
  removeTempDir(context.dir);
});

function trigger(context: Context, extra: Partial<TriggerInput> = {}): Promise<TriggerConfig> {
  return context.factory.api.saveTrigger({ name: 'Reviews', kind: 'github-review', enabled: true, pipelineId: context.pipelineId, connectionId: context.account.id, filter: { repo }, webhookSecret: secret, ...extra });
}

/** The runs the review trigger started, oldest first. */
async function followUps(context: Context): Promise<Run[]> {
  const runs = await context.factory.api.listRuns({ pipelineId: context.pipelineId, limit: 100 });
  return Promise.all(runs.reverse().map(async (run) => (await context.factory.api.getRun(run.id))!));
}

async function ledger(context: Context, triggerId: string): Promise<string[]> {
  const state = (await context.factory.api.snapshot()).triggerStates[triggerId]!;
  return state.ledger.map((entry) => entry.decision.replace(/run_\w+/, 'run_…'));
}

/** The example's single-line comment as the fake GitHub keeps it: review 237895671 with comment 284312630. */
function exampleReview(context: Context): void {
  context.fake.addReview(repo, context.pull.number, {
    id: exampleReviewId, state: 'COMMENTED', body: null, author: reviewer.login,
    comments: [{ id: exampleCommentId, path: 'README.md', line: 265, body: 'Maybe you should use more emojji on this line.' }],
  });
}

// ─── Accepted events ───

reviews('a signed review starts one follow-up run on the pull request, with the review as its issue', async (context) => {
  const { fake, pull, target } = context;
  exampleReview(context);
  const saved = await trigger(context);
  const url = `${context.hooks}/${saved.id}`;
  const deliveryId = '2f4f0d80-7731-11e9-8f9e-2a86e4085a59';
  const answer = await fake.deliver(url, 'pull_request_review', aimed(reviewSubmitted(), target, reviewer), { secret, deliveryId });
  assert.equal(answer, { status: 201, body: { issue: `${repo}#${pull.number} review ${exampleReviewId}`, created: true } });
  const [run, ...more] = await followUps(context);
  assert.is(more.length, 0);
  assert.equal(run!.issue!.title, pull.title);
  assert.is(run!.issue!.key, `${repo}#${pull.number}`);
  assert.is(run!.issue!.url, pull.html_url);
  assert.is(run!.issue!.description, 'README.md:265\nMaybe you should use more emojji on this line.');
  assert.is((run!.issue!.raw as any).review.id, exampleReviewId, 'issue.raw is the event');
  assert.equal(run!.followUp, { repository: repo, number: pull.number, url: pull.html_url, branch: target.head, remote: 'upstream', reviewId: exampleReviewId });
  assert.is(run!.triggerId, saved.id);
  // The comment GitHub sends beside the review, and a redelivery of the review, start nothing more.
  assert.equal(await fake.deliver(url, 'pull_request_review_comment', aimed(reviewCommentCreated(), target, reviewer), { secret }), { status: 200, body: { issue: `${repo}#${pull.number} review ${exampleReviewId}`, created: false } });
  assert.is((await fake.deliver(url, 'pull_request_review', aimed(reviewSubmitted(), target, reviewer), { secret, deliveryId })).status, 200);
  assert.is((await followUps(context)).length, 1);
  assert.equal((await ledger(context, saved.id)).slice(0, 3), [`already processed: delivery ${deliveryId} was decided before`, 'already processed', 'started run_…']);
  // The permission was asked once (kept 5 minutes), for the reviewer.
  assert.equal(fake.callsTo('GET', `/repos/${repo}/collaborators/${reviewer.login}/permission`).length, 1);
});

reviews('the comment arriving before its review starts the run with the whole review; the review and a poll then start nothing', async (context) => {
  const { fake, pull, target } = context;
  const saved = await trigger(context);
  await context.factory.api.pollTrigger(saved.id); // the first poll notes where things are
  fake.addReview(repo, pull.number, {
    id: exampleReviewId, state: 'CHANGES_REQUESTED', body: 'Two things before this can go in.', author: reviewer.login,
    comments: [{ id: exampleCommentId, path: 'README.md', line: 265, body: 'Maybe you should use more emojji on this line.' }, { path: 'src/login.ts', line: 12, body: 'This throws on an empty password.' }],
  });
  const url = `${context.hooks}/${saved.id}`;
  assert.is((await fake.deliver(url, 'pull_request_review_comment', aimed(reviewCommentCreated(), target, reviewer), { secret })).status, 201);
  const review = aimed(reviewSubmitted(), target, reviewer);
  Object.assign(review.review, { state: 'changes_requested', body: 'Two things before this can go in.' });
  assert.is((await fake.deliver(url, 'pull_request_review', review, { secret })).status, 200);
  await context.factory.api.pollTrigger(saved.id);
  await context.factory.api.pollTrigger(saved.id);
  const runs = await followUps(context);
  assert.is(runs.length, 1);
  assert.is(runs[0]!.issue!.description, 'Two things before this can go in.\n\nREADME.md:265\nMaybe you should use more emojji on this line.\n\nsrc/login.ts:12\nThis throws on an empty password.');
  assert.is(runs[0]!.followUp!.reviewId, exampleReviewId);
  assert.is((await context.factory.api.snapshot()).triggerStates[saved.id]!.lastError, undefined);
});

reviews('a poll finds a review the webhooks missed, once; unchanged lists are asked with their ETags', async (context) => {
  const { factory, fake, pull } = context;
  const saved = await trigger(context);
  const old = fake.addReview(repo, pull.number, { state: 'CHANGES_REQUESTED', body: 'Before the trigger existed.', author: reviewer.login });
  await factory.api.pollTrigger(saved.id);
  assert.is((await followUps(context)).length, 0, 'a new trigger does not answer old reviews');
  const { review } = fake.addReview(repo, pull.number, { state: 'CHANGES_REQUESTED', body: 'Please keep the old endpoint working.', author: reviewer.login, comments: [{ path: 'src/api.ts', line: 40, body: 'Still called by the mobile app.' }] });
  await factory.api.pollTrigger(saved.id);
  const runs = await followUps(context);
  assert.equal(runs.map((run) => run.followUp?.reviewId), [review.id]);
  assert.not.equal(review.id, old.review.id);
  assert.is(runs[0]!.issue!.description, 'Please keep the old endpoint working.\n\nsrc/api.ts:40\nStill called by the mobile app.');
  assert.is((runs[0]!.issue!.raw as any).id, review.id, 'issue.raw is the review the poll found');
  await factory.api.pollTrigger(saved.id);
  await factory.api.pollTrigger(saved.id);
  assert.is((await followUps(context)).length, 1);
  const reviewLists = fake.callsTo('GET', `/repos/${repo}/pulls/${pull.number}/reviews`);
  assert.ok(reviewLists.at(-1)!.headers['if-none-match'], 'the reviews are asked with their ETag');
  assert.is(reviewLists.at(-1)!.status, 304);
  assert.is(fake.callsTo('GET', `/repos/${repo}/pulls/${pull.number}`).at(-1)!.status, 304, 'the pull request too');
  const commentLists = fake.callsTo('GET', `/repos/${repo}/pulls/comments`);
  assert.equal([commentLists.at(-1)!.query.sort, commentLists.at(-1)!.query.direction], ['updated', 'asc']);
  assert.ok(commentLists.at(-1)!.query.since, 'the comments are asked since the last poll');
  assert.is(commentLists.at(-1)!.status, 304);
});

reviews('a poll reads every page of a pull request’s reviews', async (context) => {
  const { factory, fake, pull } = context;
  const saved = await trigger(context);
  await factory.api.pollTrigger(saved.id);
  for (let index = 0; index < 100; index++) fake.addReview(repo, pull.number, { state: 'COMMENTED', body: `Pushed fix ${index}.`, author: fake.user.login });
  const { review } = fake.addReview(repo, pull.number, { state: 'CHANGES_REQUESTED', body: 'On the second page.', author: reviewer.login });
  await factory.api.pollTrigger(saved.id);
  assert.is((await factory.api.snapshot()).triggerStates[saved.id]!.lastError, undefined);
  assert.ok(fake.callsTo('GET', `/repos/${repo}/pulls/${pull.number}/reviews`).some((call) => call.query.page === '2'));
  assert.equal((await followUps(context)).map((run) => run.followUp?.reviewId), [review.id]);
});

reviews('a comment beginning with /factory on the pull request starts a follow-up; other comments do not', async (context) => {
  const { fake, pull, target } = context;
  const saved = await trigger(context);
  const url = `${context.hooks}/${saved.id}`;
  assert.equal(await fake.deliver(url, 'issue_comment', aimed(pullRequestCommentCreated('Thanks, looks good so far.'), target, reviewer), { secret }), { status: 202, body: { ignored: true } });
  assert.is((await fake.deliver(url, 'issue_comment', aimed(pullRequestCommentCreated('/factory please add a test for the empty password'), target, reviewer), { secret })).status, 201);
  const [run] = await followUps(context);
  assert.is(run!.issue!.description, 'please add a test for the empty password');
  assert.equal(run!.followUp, { repository: repo, number: pull.number, url: pull.html_url, branch: target.head, remote: 'upstream', commentId: 492700400 });
  assert.ok(fake.callsTo('GET', `/repos/${repo}/pulls/${pull.number}`).length > 0, 'the comment has no branch: the pull request is read');
  assert.is((await ledger(context, saved.id))[1], 'ignored: a comment that does not begin with /factory');
});

// ─── Ignored events ───

reviews('ignored with their reasons: Factory’s own account, other pull requests, approvals without comments, reviewers without write access', async (context) => {
  const { fake, pull, target } = context;
  const saved = await trigger(context);
  const url = `${context.hooks}/${saved.id}`;
  const send = (payload: object) => fake.deliver(url, 'pull_request_review', payload, { secret });
  const review = (fields: Parameters<FakeGitHub['addReview']>[2], on = pull) => {
    const { review: made } = fake.addReview(repo, on.number, fields);
    const payload = aimed(reviewSubmitted(), { ...target, number: on.number, head: on.head!, title: on.title, htmlUrl: on.html_url }, made.user.login === reviewer.login ? reviewer : made.user);
    Object.assign(payload.review, { id: made.id, state: made.state.toLowerCase(), body: made.body });
    return payload;
  };
  const ignored = { status: 202, body: { ignored: true } };
  const expected: string[] = [];
  // Factory's own account (its pushes and comments come back as events).
  assert.equal(await send(review({ state: 'COMMENTED', body: 'Pushed the fix.', author: fake.user.login })), ignored);
  expected.push(`ignored: written by Factory's own account (${fake.user.login})`);
  // A pull request a person opened, and one on a factory/ branch that no run opened.
  const theirs = fake.addIssue(repo, { title: 'A person’s change', pullRequest: true, head: 'feature/login' });
  assert.equal(await send(review({ state: 'CHANGES_REQUESTED', body: 'Fix this.', author: reviewer.login }, theirs)), ignored);
  expected.push(`ignored: #${theirs.number} is not a pull request Factory opened`);
  const unknown = fake.addIssue(repo, { title: 'Not ours either', pullRequest: true, head: 'factory/run_elsewhere' });
  assert.equal(await send(review({ state: 'CHANGES_REQUESTED', body: 'Fix this.', author: reviewer.login }, unknown)), ignored);
  expected.push(`ignored: #${unknown.number} is not a pull request Factory opened`);
  // An approval without comments; an approval with one is a request all the same.
  assert.equal(await send(review({ state: 'APPROVED', body: 'LGTM', author: reviewer.login })), ignored);
  expected.push('ignored: an approval without comments');
  // Reviewers with read access, and people who are not collaborators at all.
  fake.setRole(repo, 'reader', 'read');
  fake.setRole(repo, 'triager', 'triage');
  for (const login of ['reader', 'triager', 'passer-by']) {
    assert.equal(await send(review({ state: 'CHANGES_REQUESTED', body: 'Rewrite it in Rust.', author: login })), ignored);
  }
  expected.push(`ignored: reader has no write access to ${repo} (read)`, `ignored: triager has no write access to ${repo} (read)`, `ignored: passer-by has no write access to ${repo} (none)`);
  assert.equal((await ledger(context, saved.id)).slice(0, expected.length).reverse(), expected);
  assert.is((await followUps(context)).length, 0);
  // A maintainer may ask; so may an approval that comes with a comment.
  fake.setRole(repo, 'maintainer', 'maintain');
  assert.is((await send(review({ state: 'CHANGES_REQUESTED', body: 'Rename it.', author: 'maintainer' }))).status, 201);
  assert.is((await send(review({ state: 'APPROVED', body: 'Fine, one nit.', author: reviewer.login, comments: [{ path: 'a.ts', line: 1, body: 'nit: a name' }] }))).status, 201);
});

reviews('a review answered stays answered: after a restart, and a poll after the repository is spelled anew, start nothing', async (context) => {
  const { fake, pull, target } = context;
  exampleReview(context);
  const saved = await trigger(context);
  await context.factory.api.pollTrigger(saved.id);
  const url = `${context.hooks}/${saved.id}`;
  assert.is((await fake.deliver(url, 'pull_request_review', aimed(reviewSubmitted(), target, reviewer), { secret })).status, 201);
  await context.factory.close();
  context.factory = await startTestFactory({ dir: context.dir, overrides: { webhookServer: { enabled: true, port: Number(new URL(url).port) } }, triggerTuning: { firstPollDelayMs: 3600_000 } });
  assert.equal(await fake.deliver(url, 'pull_request_review_comment', aimed(reviewCommentCreated(), target, reviewer), { secret }), { status: 200, body: { issue: `${repo}#${pull.number} review ${exampleReviewId}`, created: false } });
  // Another spelling of the repository is another filter: the next poll is a full one, then one that sees the comment again.
  await trigger(context, { id: saved.id, filter: { repo: 'Acme/App' } });
  await context.factory.api.pollTrigger(saved.id);
  await context.factory.api.pollTrigger(saved.id);
  assert.ok(fake.callsTo('GET', `/repos/Acme/App/pulls/comments`).some((call) => call.query.since), 'the comments were listed again');
  assert.is((await followUps(context)).length, 1);
});

reviews('concurrent reviews of one pull request never pass maxFollowUps', async (context) => {
  const { fake, pull, target } = context;
  const saved = await trigger(context, { maxFollowUps: 1 });
  const payloads = [1, 2, 3].map((index) => {
    const { review } = fake.addReview(repo, pull.number, { state: 'CHANGES_REQUESTED', body: `Reviewer ${index}.`, author: reviewer.login });
    const payload = aimed(reviewSubmitted(), target, reviewer);
    Object.assign(payload.review, { id: review.id, state: 'changes_requested', body: review.body });
    return payload;
  });
  const answers = await Promise.all(payloads.map((payload) => fake.deliver(`${context.hooks}/${saved.id}`, 'pull_request_review', payload, { secret })));
  assert.equal(answers.map((answer) => answer.status).sort(), [201, 202, 202]);
  assert.is((await followUps(context)).length, 1);
});

reviews('more than maxFollowUps follow-ups for one pull request are ignored', async (context) => {
  const { fake, pull, target } = context;
  await rejects(trigger(context, { maxFollowUps: -1 }), /^The follow-up limit must be a whole number from 0 to 1000/m);
  const saved = await trigger(context, { maxFollowUps: 2 });
  assert.is(saved.maxFollowUps, 2);
  const url = `${context.hooks}/${saved.id}`;
  const statuses: number[] = [];
  for (let index = 1; index <= 3; index++) {
    const { review } = fake.addReview(repo, pull.number, { state: 'CHANGES_REQUESTED', body: `Round ${index}.`, author: reviewer.login });
    const payload = aimed(reviewSubmitted(), target, reviewer);
    Object.assign(payload.review, { id: review.id, state: 'changes_requested', body: review.body });
    statuses.push((await fake.deliver(url, 'pull_request_review', payload, { secret })).status);
  }
  assert.equal(statuses, [201, 201, 202]);
  assert.is((await followUps(context)).length, 2);
  assert.is((await ledger(context, saved.id))[0], `ignored: 2 follow-ups already for #${pull.number} (maxFollowUps)`);
  const defaulted = await trigger(context, { name: 'Default limit' });
  assert.is(defaulted.maxFollowUps, 3);
});

reviews('a closed pull request starts nothing; closed or merged, its state is recorded on the run that opened it', async (context) => {
  const { factory, fake, pull, target, opener } = context;
  const saved = await trigger(context);
  const url = `${context.hooks}/${saved.id}`;
  assert.equal(await fake.deliver(url, 'pull_request', aimed(pullRequestClosed(true), target, reviewer), { secret }), { status: 202, body: { ignored: true } });
  assert.is((await ledger(context, saved.id))[0], `#${pull.number} merged: recorded on its run; nothing to start`);
  assert.is((await factory.api.getRun(opener.id))!.steps[0]!.pullRequest!.state, 'merged');
  assert.is((await factory.api.listRuns()).find((run) => run.id === opener.id)!.steps[0]!.pullRequest!.state, 'merged', 'the list shows it too');
  // A review that comes late on a closed pull request.
  const late = aimed(reviewSubmitted(), target, reviewer);
  late.pull_request.state = 'closed';
  exampleReview(context);
  assert.equal(await fake.deliver(url, 'pull_request_review', late, { secret }), { status: 202, body: { ignored: true } });
  assert.match((await ledger(context, saved.id))[0]!, new RegExp(`^ignored: #${pull.number} is (closed|merged)$`));
  assert.is((await followUps(context)).length, 0);
});

reviews('a poll records a pull request closed without merging', async (context) => {
  const { factory, fake, pull, opener } = context;
  const saved = await trigger(context);
  await factory.api.pollTrigger(saved.id);
  fake.closePull(pull, { merged: false });
  await factory.api.pollTrigger(saved.id);
  await waitFor(async () => (await factory.api.getRun(opener.id))!.steps[0]!.pullRequest!.state === 'closed', 5000, 'the state to be recorded');
  const asked = fake.callsTo('GET', `/repos/${repo}/pulls/${pull.number}`).length;
  await factory.api.pollTrigger(saved.id);
  assert.is(fake.callsTo('GET', `/repos/${repo}/pulls/${pull.number}`).length, asked, 'a closed pull request is not asked again');
});

reviews('deliveries without a valid signature are refused; without a secret every delivery is', async (context) => {
  const { fake, target } = context;
  exampleReview(context);
  const saved = await trigger(context);
  const url = `${context.hooks}/${saved.id}`;
  const payload = aimed(reviewSubmitted(), target, reviewer);
  const refused = { status: 401, body: { error: 'invalid signature' } };
  assert.equal(await fake.deliver(url, 'pull_request_review', payload, { signature: null }), refused);
  assert.equal(await fake.deliver(url, 'pull_request_review', payload, { secret: 'not-the-secret' }), refused);
  assert.equal(await fake.deliver(url, 'pull_request_review', payload, { signature: 'sha256=0000' }), refused);
  const unsigned = await trigger(context, { name: 'No secret', webhookSecret: '' });
  assert.equal(await fake.deliver(`${context.hooks}/${unsigned.id}`, 'pull_request_review', payload, { secret: '' }), refused);
  assert.equal(await fake.deliver(`${context.hooks}/${unsigned.id}`, 'pull_request_review', payload, { signature: null }), refused);
  assert.is((await followUps(context)).length, 0);
  assert.is((await fake.deliver(url, 'pull_request_review', payload, { secret })).status, 201);
});

reviews('the trigger needs a GitHub account and a repository', async (context) => {
  await rejects(trigger(context, { filter: {} }), /^The repository must be the one whose pull requests are watched, as owner\/name/m);
  await rejects(trigger(context, { connectionId: 'con_missing' }), /^Choose the account the trigger uses/m);
  await rejects(trigger(context, { filter: { repo: 'acme/secret' } }), /^GitHub has no repository `acme\/secret` that this token can read/m);
});

reviews.run();
