// The newcomer's path through issue 23, end to end, as one person would set it up: a project whose
// repository has a remote (a real bare git repository as `origin`, served over git's smart HTTP
// at a GitHub-shaped URL, so the step reads owner/name from it as from github.com), a GitHub account (the fake
// GitHub hosting that bare repository), a Linear account (the fake Linear), the `feature` template
// made while the GitHub account exists (so it ends with an approval and a pull request), and a
// Linear trigger on it. The run is approved, the pull request opens naming the Linear issue, the
// Linear comment links it; a signed review asking for changes comes back as a follow-up run of the
// `review` template on the same branch, which resumes the first run's Claude session (the fake
// Claude keeps sessions by folder) and pushes onto the same pull request; the merge is recorded
// on the run that opened it. The review trigger's poll also finds `/factory` comments.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionView, Pipeline, Run, TriggerConfig } from '../../src/core/api';
import { FakeGitHub, type FakeGitHubIssue } from '../fakes/github';
import { FakeLinear } from '../fakes/linear';
import { startTestFactory, type TestFactory } from '../helpers/factory';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http';
import { freePort } from '../helpers/net';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';
import { aimed, pullRequestClosed, pullRequestCommentCreated, reviewSubmitted, type PullTarget } from '../triggers/github-review-payloads';

process.env.PATH = `${resolve('test/fakes/bin')}:${process.env.PATH}`;

const repository = 'acme/widgets';
const secret = 'review-loop-secret-0123456789';
const reviewer = { login: 'octo-reviewer', id: 5_550_001 };
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { env: gitEnv, encoding: 'utf8' }).trim();
}

interface Context {
  dir: string;
  /** The bare repository behind origin (served over git's smart HTTP as …/acme/widgets.git). */
  remote: string;
  gitServer: GitHttpServer;
  repo: string;
  argsFile: string;
  github: FakeGitHub;
  linear: FakeLinear;
  factory: TestFactory;
  hooks: string;
  githubAccount: ConnectionView;
  linearAccount: ConnectionView;
  feature: Pipeline;
  review: Pipeline;
}

const loop = suite<Context>('review loop');

loop.before.each(async (context) => {
  context.dir = makeTempDir('factory-loop');
  // The project's repository: one commit on main (with tests that pass), pushed to a bare remote.
  context.remote = join(context.dir, 'git', `${repository}.git`);
  context.gitServer = await startGitHttpServer(join(context.dir, 'git'));
  context.repo = join(context.dir, 'repo');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', context.remote], { env: gitEnv });
  mkdirSync(context.repo);
  git(context.repo, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(context.repo, 'package.json'), JSON.stringify({ name: 'widgets', private: true, scripts: { test: 'node -e ""' } }));
  git(context.repo, 'add', '.');
  git(context.repo, 'commit', '--quiet', '-m', 'first');
  git(context.repo, 'remote', 'add', 'origin', context.gitServer.urlOf(repository));
  // Straight to the folder: a synchronous git cannot talk to a server in this same process.
  git(context.repo, 'push', '--quiet', context.remote, 'main:main');

  context.github = await FakeGitHub.start();
  context.github.hostGit(repository, context.remote);
  context.github.setRole(repository, reviewer.login, 'write');
  context.linear = await FakeLinear.start();
  const port = await freePort();
  context.hooks = `http://127.0.0.1:${port}/hooks`;
  context.factory = await startTestFactory({ dir: join(context.dir, 'data'), overrides: { webhookServer: { enabled: true, port } }, triggerTuning: { firstPollDelayMs: 3600_000, writeBackRetryDelaysMs: [50, 50] } });
  const { api } = context.factory;

  // The fake Claude as the default harness, keeping its sessions under the test's HOME and recording its arguments.
  context.argsFile = join(context.dir, 'claude-args.jsonl');
  mkdirSync(join(context.dir, 'home'));
  const claude = (await api.snapshot()).harnesses.find((harness) => harness.id === 'claude')!;
  await api.saveHarness({ ...claude, env: { HOME: join(context.dir, 'home'), FAKE_SESSIONS: '1', FAKE_ARGS_FILE: context.argsFile } });

  const project = await api.saveProject({ name: 'Widgets', path: context.repo, worktrees: true });
  context.githubAccount = await api.saveConnection({ kind: 'github', name: 'Acme GitHub', baseUrl: context.github.url, token: context.github.token });
  context.linearAccount = await api.saveConnection({ kind: 'linear', name: 'Acme Linear', baseUrl: context.linear.url, token: context.linear.apiKey });
  context.feature = await api.createPipelineFromTemplate('feature', project.id);
  context.review = await api.createPipelineFromTemplate('review', project.id);
});
loop.after.each(async (context) => {
  await context.factory.close();
  await context.github.stop();
  await context.linear.stop();
  await context.gitServer.stop();
  removeTempDir(context.dir);
});

/** Each invocation of the fake Claude: its arguments, folder and prompt. */
function invocations(context: Context): { argv: string[]; cwd: string; prompt: string }[] {
  return existsSync(context.argsFile) ? readFileSync(context.argsFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line)) : [];
}

function reviewTrigger(context: Context): Promise<TriggerConfig> {
  return context.factory.api.saveTrigger({ name: 'Reviews', kind: 'github-review', enabled: true, pipelineId: context.review.id, connectionId: context.githubAccount.id, filter: { repo: repository }, webhookSecret: secret });
}

/** The follow-up runs of the review pipeline, oldest first, whole. */
async function followUps(context: Context): Promise<Run[]> {
  const runs = await context.factory.api.listRuns({ pipelineId: context.review.id, limit: 100 });
  return Promise.all(runs.reverse().map(async (run) => (await context.factory.api.getRun(run.id))!));
}

/**
 * A Linear issue taken by the Linear trigger, its run approved and finished: the pull request it opened.
 * Checks on the way that the feature template ends with an approval and a pull request.
 */
async function openPullRequestFromLinear(context: Context): Promise<{ run: Run; pull: FakeGitHubIssue; target: PullTarget; identifier: string }> {
  const { api } = context.factory;
  assert.equal(context.feature.steps.slice(-2).map((step) => step.kind), ['approval', 'pullRequest'], 'with a GitHub account, feature ends with an approval and a pull request');
  const issue = context.linear.addIssue({ title: 'Count the widgets', team: 'ENG', description: 'Show how many widgets there are.' });
  const trigger = await api.saveTrigger({ name: 'Linear', kind: 'linear', enabled: true, pipelineId: context.feature.id, connectionId: context.linearAccount.id, filter: { team: 'ENG' }, writeBack: { comment: true } });
  await api.pollTrigger(trigger.id);
  const [listed] = await api.listRuns({ pipelineId: context.feature.id });
  assert.ok(listed, 'the poll started a run');
  const waiting = await context.factory.waitForRun(listed!.id, ['waiting', 'failed'], 20_000);
  assert.is(waiting.status, 'waiting', waiting.error ?? JSON.stringify(waiting.steps.map((step) => [step.id, step.status, step.error])));
  assert.equal(context.github.pulls(repository), [], 'nothing is proposed before the approval');
  await api.approveStep(waiting.id, 'review', true, 'Looks right');
  const run = await context.factory.waitForRun(waiting.id, ['succeeded', 'failed'], 20_000);
  assert.is(run.status, 'succeeded', run.error ?? JSON.stringify(run.steps.map((step) => [step.id, step.status, step.error])));
  const pulls = context.github.pulls(repository);
  assert.is(pulls.length, 1);
  const pull = pulls[0]!;
  return { run, pull, identifier: issue.identifier, target: { repo: repository, number: pull.number, head: pull.head!, title: pull.title, htmlUrl: pull.html_url } };
}

loop('a Linear issue becomes a pull request; a review comes back as a follow-up that resumes the session and pushes onto the same pull request; the merge is recorded', async (context) => {
  const { github, linear, factory } = context;
  const { run: first, pull, target, identifier } = await openPullRequestFromLinear(context);
  const branch = `factory/${first.id}`;

  // The pull request: from the run's branch, naming the Linear issue so Linear links it.
  assert.equal({ head: pull.head, base: pull.base, title: pull.title }, { head: branch, base: 'main', title: 'Count the widgets' });
  assert.match(pull.body ?? '', `Fixes ${identifier}`);
  const recorded = first.steps.at(-1)!.pullRequest!;
  assert.equal(recorded, { number: pull.number, url: pull.html_url, repository, branch, state: 'open' });
  const firstCommit = git(context.remote, 'rev-parse', `refs/heads/${branch}`);
  assert.is(git(context.remote, 'show', `${branch}:agent-was-here.txt`).split('\n')[0], 'Implement this feature in the repository.');
  // The run's one Linear comment carries the pull request's link.
  await waitFor(() => linear.commentsOn(linear.issues[0]!).some((comment) => comment.body.includes(pull.html_url)), 10_000, 'the Linear comment to link the pull request');
  assert.is(linear.commentsOn(linear.issues[0]!).length, 1, 'one comment, updated');

  const session = first.steps.find((step) => step.kind === 'agent')!.sessionId;
  assert.ok(session, 'the first run recorded its Claude session');

  // A reviewer asks for changes, with a line comment, through a signed pull_request_review.
  const reviews = await reviewTrigger(context);
  const { review } = github.addReview(repository, pull.number, {
    state: 'CHANGES_REQUESTED', body: 'Please count the broken ones too.', author: reviewer.login,
    comments: [{ path: 'agent-was-here.txt', line: 1, body: 'Say "widgets", not "features".' }],
  });
  const payload = aimed(reviewSubmitted(), target, reviewer);
  Object.assign(payload.review, { id: review.id, state: 'changes_requested', body: review.body });
  const answer = await github.deliver(`${context.hooks}/${reviews.id}`, 'pull_request_review', payload, { secret });
  assert.is(answer.status, 201, JSON.stringify(answer.body));
  const [started, ...more] = await followUps(context);
  assert.is(more.length, 0);
  const second = await factory.waitForRun(started!.id, ['succeeded', 'failed'], 20_000);
  assert.is(second.status, 'succeeded', second.error ?? JSON.stringify(second.steps.map((step) => [step.id, step.status, step.error])));
  assert.equal(second.followUp, { repository, number: pull.number, url: pull.html_url, branch, remote: 'origin', reviewId: review.id });
  assert.is(second.issue!.description, 'Please count the broken ones too.\n\nagent-was-here.txt:1\nSay "widgets", not "features".');

  // Its workspace started from the pull request's branch: the first run's commit is there.
  assert.is.not(second.workspace, first.workspace);
  git(second.workspace!, 'merge-base', '--is-ancestor', firstCommit, 'HEAD');
  // Its agent resumed the first run's session.
  const calls = invocations(context);
  assert.is(calls.length, 2, 'one agent call per run');
  assert.equal(calls[1]!.argv.slice(-2), ['--resume', session!]);
  assert.is(calls[1]!.cwd, realpathSync(second.workspace!));
  assert.match(calls[1]!.prompt, /^Address the review: Please count the broken ones too\./);
  assert.is(second.steps.find((step) => step.kind === 'agent')!.sessionId, session);

  // It pushed onto the same branch and the same pull request: both commits on the remote, still one pull request.
  const onBranch = git(context.remote, 'rev-list', `main..refs/heads/${branch}`).split('\n');
  assert.is(onBranch.length, 2, 'the first run\'s commit and the follow-up\'s');
  assert.is(onBranch[1], firstCommit);
  assert.match(git(context.remote, 'log', '-1', '--format=%s', branch), `Factory run ${second.id}`);
  assert.equal(git(context.remote, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').sort(), [branch, 'main'].sort(), 'no other branch was pushed');
  assert.is(github.pulls(repository).length, 1, 'still one pull request');
  assert.is(github.callsTo('POST', `/repos/${repository}/pulls`).length, 1, 'created once');
  assert.equal(second.steps.at(-1)!.pullRequest, { number: pull.number, url: pull.html_url, repository, branch, state: 'open' });

  // Merged on GitHub: the run that opened it records it.
  github.closePull(pull, { merged: true });
  const merged = await github.deliver(`${context.hooks}/${reviews.id}`, 'pull_request', aimed(pullRequestClosed(true), target, reviewer), { secret });
  assert.equal(merged, { status: 202, body: { ignored: true } });
  assert.is((await factory.api.getRun(first.id))!.steps.at(-1)!.pullRequest!.state, 'merged');
});

loop('a /factory comment on the pull request that no webhook delivered is found by the poll, once; its webhook later starts nothing more', async (context) => {
  const { github, factory } = context;
  const { pull, target } = await openPullRequestFromLinear(context);
  const reviews = await reviewTrigger(context);
  github.addComment(repository, pull.number, '/factory asked before the trigger existed', { author: reviewer.login });
  await factory.api.pollTrigger(reviews.id); // the first poll only notes where things are
  assert.is((await followUps(context)).length, 0, 'a new trigger does not answer old comments');

  const asked = github.addComment(repository, pull.number, '/factory please count the broken ones too', { author: reviewer.login });
  github.addComment(repository, pull.number, 'Just a remark.', { author: reviewer.login });
  github.addComment(repository, pull.number, '/factory from Factory itself', { author: github.user.login });
  await factory.api.pollTrigger(reviews.id);
  const [run, ...more] = await followUps(context);
  assert.is(more.length, 0, 'one run: remarks and Factory\'s own comments start nothing');
  assert.is(run!.issue!.description, 'please count the broken ones too');
  assert.equal(run!.followUp, { repository, number: pull.number, url: pull.html_url, branch: target.head, remote: 'origin', commentId: asked.id });
  await factory.waitForRun(run!.id, ['succeeded', 'failed'], 20_000);

  // The webhook arriving late, and later polls, start nothing more.
  const payload = aimed(pullRequestCommentCreated(asked.body), target, reviewer);
  payload.comment.id = asked.id;
  const late = await github.deliver(`${context.hooks}/${reviews.id}`, 'issue_comment', payload, { secret });
  assert.is(late.status, 200, JSON.stringify(late.body));
  for (let poll = 0; poll < 4; poll++) await factory.api.pollTrigger(reviews.id);
  assert.is((await followUps(context)).length, 1);
  // Once nothing changes, each poll asks since the last one with the ETag, and GitHub answers 304.
  for (const call of github.callsTo('GET', `/repos/${repository}/issues/comments`).slice(-2)) {
    assert.ok(call.query.since, 'the comments are asked since the last poll');
    assert.ok(call.headers['if-none-match'], 'with their ETag');
    assert.is(call.status, 304);
  }
});

loop.run();
