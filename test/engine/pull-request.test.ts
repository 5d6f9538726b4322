// The pullRequest step end to end: a real Factory, a real bare git repository as the remote (a
// file path, so the step names its repository), and the fake GitHub hosting that repository's
// branches (PROVIDERS §6: pulls, 422 bodies, branches). One pull request per branch through
// retries and a kill -9 between GitHub creating it and Factory recording it; nothing pushed when
// the repository, the base or the remote is wrong; git's own words when a push is refused.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionView, Pipeline, PullRequestRef, Run, Step } from '../../src/core/api';
import { newRunId } from '../../src/core/ids';
import { createPullRequestRunner } from '../../src/engine/pull-request-step';
import { runProcess } from '../../src/engine/process';
import type { StepAttempt } from '../../src/engine/steps';
import { prepareWorkspace, type CommandRunner } from '../../src/engine/workspace';
import { validatePipeline } from '../../src/core/pipeline';
import { repositoryOfRemote } from '../../src/core/github-repository';
import { githubPulls, pullRequestLink } from '../../src/triggers/github-pulls';
import { runComment } from '../../src/triggers/write-back';
import { commentMarkdown } from '../../src/triggers/comment-text';
import { FakeGitHub } from '../fakes/github';
import { rejects } from '../helpers/assert';
import { startChildFactory, type ChildFactory } from '../helpers/child-factory';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

const repository = 'acme/widgets';
const childPath = new URL('./factory.child.mjs', import.meta.url).pathname;
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { env: gitEnv, encoding: 'utf8' }).trim();
}

/** The branches of the bare remote. */
function remoteBranches(remote: string): string[] {
  return git(remote, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean).sort();
}

interface Context {
  dir: string;
  /** The bare repository pushed to (the fake GitHub serves its branches). */
  remote: string;
  /** The project's repository, with `origin` = remote. */
  repo: string;
  fake: FakeGitHub;
  factory: TestFactory;
  projectId: string;
  account: ConnectionView;
}

/** A project repository with one commit on main, pushed to a bare remote that the fake GitHub hosts as acme/widgets. */
function makeRepositories(dir: string): { remote: string; repo: string } {
  const remote = join(dir, 'remote.git');
  const repo = join(dir, 'repo');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote], { env: gitEnv });
  mkdirSync(repo);
  git(repo, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(repo, 'README.md'), 'widgets\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '--quiet', '-m', 'first');
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '--quiet', 'origin', 'main');
  return { remote, repo };
}

const pulls = suite<Context>('pull request step');

pulls.before.each(async (context) => {
  context.dir = makeTempDir('factory-pr');
  Object.assign(context, makeRepositories(context.dir));
  context.fake = await FakeGitHub.start();
  context.fake.hostGit(repository, context.remote);
  context.factory = await startTestFactory({ dir: join(context.dir, 'data') });
  context.projectId = (await context.factory.api.saveProject({ name: 'Widgets', path: context.repo, worktrees: true })).id;
  context.account = await context.factory.api.saveConnection({ kind: 'github', name: 'Acme', baseUrl: context.fake.url, token: context.fake.token });
});
pulls.after.each(async (context) => {
  await context.factory.close();
  await context.fake.stop();
  removeTempDir(context.dir);
});

function pullRequestStep(context: Pick<Context, 'account'>, extra: Record<string, unknown> = {}): Step {
  return { id: 'pr', name: 'Pull request', kind: 'pullRequest', connectionId: context.account.id, repository, ...extra } as Step;
}

function save(context: Context, steps: Step[]): Promise<Pipeline> {
  return context.factory.api.savePipeline({ projectId: context.projectId, name: `P ${Math.random()}`, variables: {}, steps });
}

async function runOnce(context: Context, steps: Step[], issue: Run['issue'] = { title: 'Add widgets', key: `${repository}#7`, source: 'github', url: 'https://github.com/acme/widgets/issues/7' }): Promise<Run> {
  const pipeline = await save(context, steps);
  const run = await context.factory.api.startRun({ pipelineId: pipeline.id, ...(issue ? { issue } : {}) });
  return context.factory.waitForRun(run.id, ['succeeded', 'failed']);
}

const work = shell('work', 'echo "new widget" > widget.txt');

pulls('a run commits what is left, pushes its branch and opens one pull request; a retry updates the same one', async (context) => {
  const { fake } = context;
  const run = await runOnce(context, [work, pullRequestStep(context), shell('after', 'echo "opened {{steps.pr.number}} at {{steps.pr.url}}"')]);
  assert.is(run.status, 'succeeded', run.error);
  const branch = `factory/${run.id}`;
  assert.equal(remoteBranches(context.remote), [branch, 'main'].sort());
  assert.match(git(context.remote, 'log', '-1', '--format=%s', branch), `Factory run ${run.id}: ${repository}#7 Add widgets`);
  assert.is(git(context.remote, 'show', `${branch}:widget.txt`), 'new widget');

  const opened = fake.pulls(repository);
  assert.is(opened.length, 1);
  const pull = opened[0]!;
  assert.equal({ head: pull.head, base: pull.base, title: pull.title, state: pull.state }, { head: branch, base: 'main', title: 'Add widgets', state: 'open' });
  assert.match(pull.body ?? '', `Closes ${repository}#7`);
  assert.match(pull.body ?? '', `Factory run ${run.id}`);
  assert.match(pull.body ?? '', '- work (shell): succeeded');
  const url = `https://github.com/${repository}/pull/${pull.number}`;
  assert.equal(run.steps[1]!.pullRequest, { number: pull.number, url, repository, branch, state: 'open' });
  assert.is(run.steps[2]!.output, `opened ${pull.number} at ${url}\n`);
  const log = (await context.factory.api.readStepLog(run.id, 'pr')).map((line) => line.line);
  assert.ok(log.includes(`Opened pull request #${pull.number} from ${branch} to main: ${url}`), log.join('\n'));
  assert.not.ok(log.some((line) => line.includes(fake.token)), 'the token is in no log line');
  assert.not.ok(fake.calls.some((call) => call.method === 'POST' && call.headers['user-agent'] === undefined), 'every request named itself');

  const retried = await context.factory.api.retryRun(run.id, 'pr');
  const again = await context.factory.waitForRun(retried.id, ['succeeded', 'failed']);
  assert.is(again.status, 'succeeded', again.error);
  assert.is(fake.pulls(repository).length, 1, 'the retry made no second pull request');
  assert.is(fake.callsTo('POST', `/repos/${repository}/pulls`).length, 1);
  assert.is(fake.callsTo('PATCH', `/repos/${repository}/pulls/${pull.number}`).length, 1, 'the retry updated the open one');
  assert.equal(again.steps[1]!.pullRequest, run.steps[1]!.pullRequest);
});

pulls('GitHub answering "already exists" to a create (opened meanwhile) updates that pull request', async (context) => {
  const { fake } = context;
  const first = await runOnce(context, [work, pullRequestStep(context, { draft: true })]);
  assert.is(first.status, 'succeeded', first.error);
  assert.ok(fake.isDraft(fake.pulls(repository)[0]!), 'opened as a draft');
  // Another run's step opens one for the branch between our look (which sees none) and our create.
  fake.script({ status: 200, body: [] }, (call) => call.method === 'GET' && call.path === `/repos/${repository}/pulls`);
  const retried = await context.factory.api.retryRun(first.id, 'pr');
  const again = await context.factory.waitForRun(retried.id, ['succeeded', 'failed']);
  assert.is(again.status, 'succeeded', again.error);
  const create = fake.callsTo('POST', `/repos/${repository}/pulls`);
  assert.equal(create.map((call) => call.status), [201, 422], 'the second create was refused as a duplicate');
  assert.is(fake.pulls(repository).length, 1);
  assert.is(again.steps[1]!.pullRequest!.number, fake.pulls(repository)[0]!.number);
  const log = (await context.factory.api.readStepLog(first.id, 'pr')).map((line) => line.line);
  assert.ok(log.some((line) => line.startsWith(`GitHub says pull request #${fake.pulls(repository)[0]!.number} is already open`)), log.join('\n'));
});

pulls('a branch with nothing to propose fails in words, and opens nothing', async (context) => {
  const run = await runOnce(context, [pullRequestStep(context)]);
  assert.is(run.status, 'failed');
  assert.is(run.steps[0]!.error, 'Nothing to propose: the branch has no commits that main does not have');
  assert.is(context.fake.pulls(repository).length, 0);
  assert.equal(remoteBranches(context.remote), ['main'], 'nothing was pushed');
});

pulls('a refused push says what git said and what to check', async (context) => {
  const hook = join(context.remote, 'hooks', 'pre-receive');
  writeFileSync(hook, '#!/bin/sh\necho "branch policy: pushes need a review" >&2\nexit 1\n');
  chmodSync(hook, 0o755);
  const run = await runOnce(context, [work, pullRequestStep(context)]);
  assert.is(run.status, 'failed');
  const error = run.steps[1]!.error!;
  assert.match(error, 'git push to `origin` was refused: ');
  assert.match(error, 'branch policy: pushes need a review');
  assert.match(error, 'pre-receive hook declined');
  assert.match(error, 'Check your git credentials for the local folder');
  assert.match(error, `the branch protection rules of ${repository}`);
  assert.is(context.fake.pulls(repository).length, 0);
});

pulls('the push never overwrites commits someone else pushed to the branch (the lease)', async (context) => {
  const run = await runOnce(context, [work, pullRequestStep(context)]);
  assert.is(run.status, 'succeeded', run.error);
  const branch = `factory/${run.id}`;
  // A person adds a commit to the pull request's branch on the remote.
  const other = join(context.dir, 'other');
  execFileSync('git', ['clone', '--quiet', '--branch', branch, context.remote, other], { env: gitEnv });
  writeFileSync(join(other, 'review.txt'), 'a fix by hand\n');
  git(other, 'add', '.');
  git(other, 'commit', '--quiet', '-m', 'by hand');
  git(other, 'push', '--quiet', 'origin', branch);
  const theirs = git(other, 'rev-parse', 'HEAD');
  writeFileSync(join(run.workspace!, 'more.txt'), 'more\n');
  await context.factory.api.retryRun(run.id, 'pr');
  const again = await context.factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(again.status, 'failed');
  assert.match(again.steps[1]!.error!, 'git push to `origin` was refused: ');
  assert.match(again.steps[1]!.error!, 'stale info');
  assert.is(git(context.remote, 'rev-parse', `refs/heads/${branch}`), theirs, 'their commit is still there');
});

pulls('a follow-up starts from the pull request\'s branch as the remote has it, pushes onto it, and keeps the pull request\'s title', async (context) => {
  const { fake } = context;
  const first = await runOnce(context, [work, pullRequestStep(context)]);
  assert.is(first.status, 'succeeded', first.error);
  const branch = `factory/${first.id}`;
  const before = git(context.remote, 'rev-parse', `refs/heads/${branch}`);
  const pull = fake.pulls(repository)[0]!;
  // The follow-up's worktree (as the run service prepares it for Run.followUp).
  const runId = newRunId();
  const logs: string[] = [];
  const env = gitEnv as Record<string, string>;
  const command: CommandRunner = (options) => runProcess(options);
  const project = { id: 'prj_x', name: 'Widgets', path: context.repo, worktrees: true };
  const workspace = await prepareWorkspace({ project, runId, worktreesDir: join(context.dir, 'worktrees'), env, run: command, log: (line) => logs.push(line), followUp: { remote: 'origin', branch } });
  assert.is(git(workspace, 'rev-parse', 'HEAD'), before, 'it starts where the pull request is');
  assert.is(git(workspace, 'symbolic-ref', '--short', 'HEAD'), `factory/${runId}`);
  writeFileSync(join(workspace, 'review.txt'), 'addressed\n');

  const followUp = { repository, number: pull.number, url: `https://github.com/${repository}/pull/${pull.number}`, branch, reviewId: 80 };
  const recorded: PullRequestRef[] = [];
  const runner = createPullRequestRunner({ connection: () => ({ id: context.account.id, kind: 'github', name: 'Acme', baseUrl: fake.url, token: fake.token }), github: githubPulls });
  const attempt = (folder: string): StepAttempt => ({
    runId, run: { id: runId, steps: [], followUp } as unknown as Run, step: pullRequestStep(context), attempt: 1, workspace: folder, environment: env, secrets: [],
    template: { issue: { title: 'Review of #1', key: `${repository}#${pull.number}`, source: 'github' }, vars: {}, steps: {}, run: { id: runId }, project: { name: 'Widgets', path: context.repo }, workspace: folder },
    timeoutMs: 60_000, signal: new AbortController().signal, log: (line) => logs.push(line), output: () => undefined, record: () => undefined,
    recordPullRequest: async (ref) => void recorded.push(ref), started: () => undefined,
  });
  const outcome = await runner(attempt(workspace));
  assert.equal(outcome, { status: 'succeeded', output: `Pull request #${pull.number}: ${followUp.url}\n` }, logs.join('\n'));
  assert.is(git(context.remote, 'rev-parse', `refs/heads/${branch}^`), before, 'the new commit is on top of the earlier ones');
  assert.is(git(context.remote, 'show', `refs/heads/${branch}:review.txt`), 'addressed');
  assert.equal(remoteBranches(context.remote), [branch, 'main'].sort(), 'no branch of its own');
  assert.is(fake.pulls(repository).length, 1);
  assert.is(fake.callsTo('PATCH', `/repos/${repository}/pulls/${pull.number}`).length, 0, 'title and description kept');
  assert.is(recorded.at(-1)!.number, pull.number);
  assert.is(recorded.at(-1)!.branch, branch);

  // A workspace that does not build on the pull request's branch pushes nothing there.
  const head = git(context.remote, 'rev-parse', `refs/heads/${branch}`);
  const stray = await runner(attempt(context.repo));
  assert.equal(stray.status, 'failed');
  assert.match((stray as { error: string }).error, `The workspace does not build on the pull request's branch ${branch}`);
  assert.is(git(context.remote, 'rev-parse', `refs/heads/${branch}`), head);
});

pulls('a base GitHub does not have, a repository the token may not push to, a missing remote: the step fails naming it, and nothing is pushed', async (context) => {
  const base = await runOnce(context, [work, pullRequestStep(context, { base: 'release-9' })]);
  assert.is(base.steps[1]!.error, `${repository} has no branch \`release-9\` on GitHub: set the step's base to a branch that exists (its default branch is main)`);

  const missingRemote = await runOnce(context, [work, pullRequestStep(context, { remote: 'upstream' })]);
  assert.match(missingRemote.steps[1]!.error!, "The workspace's repository has no git remote `upstream`: add it");

  const unknown = await runOnce(context, [work, pullRequestStep(context, { repository: 'acme/nothing-here' })]);
  assert.match(unknown.steps[1]!.error!, 'GitHub has no repository acme/nothing-here that the account `Acme` can see');

  context.fake.readOnly.add(repository);
  const readOnly = await runOnce(context, [work, pullRequestStep(context)]);
  assert.match(readOnly.steps[1]!.error!, `The account \`Acme\` may not push to ${repository}`);

  const fromPath = await runOnce(context, [work, pullRequestStep(context, { repository: undefined })]);
  assert.match(fromPath.steps[1]!.error!, `The remote \`origin\` is the local folder ${context.remote}, which names no GitHub repository: set the step's repository to owner/name`);

  assert.equal(remoteBranches(context.remote), ['main'], 'nothing was pushed half-way');
  assert.is(context.fake.callsTo('POST', `/repos/${repository}/pulls`).length, 0);
});

pulls('the body names a Linear issue after a closing word, and a Jira key leads the title', async (context) => {
  const linear = await runOnce(context, [work, pullRequestStep(context)], { title: 'Faster widgets', key: 'ENG-12', source: 'linear', url: 'https://linear.app/acme/issue/ENG-12' });
  assert.is(linear.status, 'succeeded', linear.error);
  const [first] = context.fake.pulls(repository);
  assert.match(first!.body ?? '', /^Fixes ENG-12$/m);
  assert.match(first!.body ?? '', 'Issue: ENG-12 https://linear.app/acme/issue/ENG-12');

  const jira = await runOnce(context, [work, pullRequestStep(context, { title: 'Widgets: {{issue.title}}', body: 'Asked in {{issue.url}}; `$(rm -rf ~)` stays text.' })], { title: 'Round widgets', key: 'WID-4', source: 'jira', url: 'https://acme.atlassian.net/browse/WID-4' });
  assert.is(jira.status, 'succeeded', jira.error);
  const second = context.fake.pulls(repository)[1]!;
  assert.is(second.title, 'WID-4 Widgets: Round widgets');
  assert.is(second.body, 'Asked in https://acme.atlassian.net/browse/WID-4; `$(rm -rf ~)` stays text.');
});

pulls('saving refuses an unknown account, a repository that is not owner/name, and pull request fields asked of other steps', async (context) => {
  await rejects(save(context, [pullRequestStep(context, { connectionId: 'con_0000000000000000' })]), /the account `con_0000000000000000` is not a known account: choose one of `Acme`/);
  await rejects(save(context, [pullRequestStep(context, { repository: 'widgets' })]), /`widgets` is not a GitHub repository as owner\/name/);
  await rejects(save(context, [pullRequestStep(context, { base: '-x' })]), /is not a branch name git accepts/);
  await rejects(save(context, [work, shell('echo', 'echo {{steps.work.url}}')]), /only pull request steps have url/);
  // A Linear account is no GitHub account (checked where the accounts are known: at save).
  const context2 = { projectIds: [context.projectId], harnessIds: [], connections: [{ id: 'con_linear', kind: 'linear', name: 'Linear' }] };
  const input = { projectId: context.projectId, name: 'P', variables: {}, steps: [{ id: 'pr', name: 'PR', kind: 'pullRequest', connectionId: 'con_linear' }] };
  assert.throws(() => validatePipeline(input, context2, Date.now()), /`Linear` is a linear account, and pull requests need a GitHub one: add a GitHub account first/);
});

pulls('with a GitHub account, the feature and review templates end with a pull request through it', async (context) => {
  const feature = await context.factory.api.createPipelineFromTemplate('feature', context.projectId);
  assert.equal(feature.steps.slice(-2).map((step) => step.kind), ['approval', 'pullRequest']);
  assert.equal(feature.steps.at(-1), { id: 'pull-request', name: 'Pull request', kind: 'pullRequest', connectionId: context.account.id });
  const review = await context.factory.api.createPipelineFromTemplate('review', context.projectId);
  assert.equal(review.steps.map((step) => step.kind), ['agent', 'shell', 'pullRequest']);
});

pulls('the run comment of a GitHub issue carries the pull request link; an address off the account\'s host is no link', async (context) => {
  const { fake, factory } = context;
  await factory.close();
  const port = await freePort();
  context.factory = await startTestFactory({ dir: join(context.dir, 'data'), overrides: { webhookServer: { enabled: true, port } }, triggerTuning: { firstPollDelayMs: 3600_000, writeBackRetryDelaysMs: [50, 50] } });
  const pipeline = await save(context, [work, pullRequestStep(context)]);
  const secret = 'pull-request-webhook-secret-0123';
  const trigger = await context.factory.api.saveTrigger({ name: 'Widgets', kind: 'github', enabled: true, pipelineId: pipeline.id, connectionId: context.account.id, filter: { repo: repository }, webhookSecret: secret, writeBack: { comment: true } });
  const issue = fake.addIssue(repository, { title: 'Blue widgets' });
  assert.is((await fake.deliver(`http://127.0.0.1:${port}/hooks/${trigger.id}`, 'issues', fake.payload('issues', 'opened', issue), { secret })).status, 201);
  const run = (await context.factory.api.listRuns())[0]!;
  const done = await context.factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  const pull = fake.pulls(repository)[0]!;
  assert.match(pull.body ?? '', `Closes ${repository}#${issue.number}`);
  await waitFor(() => fake.comments(repository, issue.number)[0]?.body.includes('succeeded') ?? false, 5000, 'the finished comment');
  const comment = fake.comments(repository, issue.number)[0]!.body;
  assert.ok(comment.includes(`[Pull request #${pull.number}](https://github.com/${repository}/pull/${pull.number}) in ${repository}`), comment);

  // GitHub's answer is still checked: http, another host, or credentials in it make no link.
  const connection = { id: 'c', kind: 'github' as const, name: 'A', token: 't' };
  assert.is(pullRequestLink('https://github.com/a/b/pull/1', connection), 'https://github.com/a/b/pull/1');
  for (const bad of ['http://github.com/a/b/pull/1', 'https://evil.example/a/b/pull/1', 'https://user:pw@github.com/a/b/pull/1', 'javascript:alert(1)']) {
    assert.is(pullRequestLink(bad, connection), undefined, bad);
  }
  assert.is(pullRequestLink('https://ghe.acme.test/a/b/pull/1', { ...connection, baseUrl: 'https://ghe.acme.test/api/v3' }), 'https://ghe.acme.test/a/b/pull/1');
  const unlinked = commentMarkdown(runComment({ ...done, steps: done.steps }, undefined, [{ number: 3, repository }]));
  assert.match(unlinked, `Pull request #3 in ${repository}`);
  assert.not.match(unlinked, '](');
});

pulls('the repository is read from the push remote\'s URL', () => {
  const cases: [string, string | undefined][] = [
    ['https://github.com/acme/widgets.git', 'acme/widgets'],
    ['https://github.com/acme/widgets', 'acme/widgets'],
    ['https://token@ghe.acme.test/acme/widgets.git', 'acme/widgets'],
    ['git@github.com:acme/widgets.git', 'acme/widgets'],
    ['git@github.com:acme/widgets', 'acme/widgets'],
    ['ssh://git@github.com/acme/widgets.git', 'acme/widgets'],
    ['ssh://git@ghe.acme.test:2222/acme/widgets', 'acme/widgets'],
    ['/home/me/widgets.git', undefined],
    ['../widgets', undefined],
    ['file:///srv/git/widgets.git', undefined],
    ['https://gitlab.acme.test/group/sub/widgets.git', undefined],
  ];
  for (const [url, expected] of cases) assert.is(repositoryOfRemote(url), expected, url);
});

pulls('a merged pull request: its branch counts as pushed, and the worktree goes at the next sweep (work left after it stays)', async (context) => {
  const run = await runOnce(context, [work, pullRequestStep(context)]);
  const later = await runOnce(context, [work, pullRequestStep(context)]);
  assert.is(run.status, 'succeeded', run.error);
  assert.is(later.status, 'succeeded', later.error);
  // Someone deletes the branches on GitHub after a squash merge: no remote-tracking branch has the commits.
  for (const { id } of [run, later]) git(context.repo, 'update-ref', '-d', `refs/remotes/origin/factory/${id}`);
  // Work left in one worktree after its pull request is on no host.
  writeFileSync(join(later.workspace!, 'after.txt'), 'not proposed\n');
  const before = await context.factory.api.listRunBranches(context.projectId);
  assert.equal(before.map(({ pushed, ahead }) => ({ pushed, ahead })), [{ pushed: false, ahead: 1 }, { pushed: false, ahead: 1 }]);
  await context.factory.close();
  // The state helper B keeps up to date from GitHub, written as it would be.
  for (const { id } of [run, later]) {
    const file = join(context.dir, 'data', 'runs', id, 'run.json');
    const stored = JSON.parse(readFileSync(file, 'utf8')) as Run;
    stored.steps[1]!.pullRequest!.state = 'merged';
    writeFileSync(file, JSON.stringify(stored));
  }
  context.factory = await startTestFactory({ dir: join(context.dir, 'data'), overrides: { worktreeRetentionDays: 30 } });
  for (const { id } of [run, later]) await waitFor(async () => (await context.factory.api.getRun(id))?.workspace === undefined, 10_000, 'the sweep to remove the worktree');
  const log = (await context.factory.api.readRunLog(run.id)).map((line) => line.line);
  assert.ok(log.some((line) => line.startsWith(`Worktree removed (the work is in pull request #1 of ${repository} (merged))`)), log.join('\n'));
  const branches = await context.factory.api.listRunBranches(context.projectId);
  assert.equal(branches.map(({ branch, pushed, ahead }) => ({ branch, pushed, ahead })), [{ branch: `factory/${later.id}`, pushed: true, ahead: 2 }], 'the clean branch went; the one with new work stays');
  assert.is((await context.factory.api.getRun(later.id))!.branch, `factory/${later.id}`);
});

pulls.run();

// ─── A crash between GitHub creating the pull request and Factory recording it ───

const crash = suite('pull request step after kill -9');

crash('GitHub created it, Factory was killed before recording it: the retry finds and updates that one', async () => {
  const dir = makeTempDir('factory-pr-crash');
  const { remote, repo } = makeRepositories(dir);
  const fake = await FakeGitHub.start();
  fake.hostGit(repository, remote);
  let release!: () => void;
  fake.hold((call) => call.method === 'POST' && call.path === `/repos/${repository}/pulls`, new Promise<void>((resolve) => { release = resolve; }));
  let factory: ChildFactory | undefined;
  try {
    const data = join(dir, 'data');
    factory = await startChildFactory(childPath, data);
    const project = await factory.call('saveProject', { name: 'Widgets', path: repo, worktrees: true });
    const account = await factory.call('saveConnection', { kind: 'github', name: 'Acme', baseUrl: fake.url, token: fake.token });
    const pipeline = await factory.call('savePipeline', { projectId: project.id, name: 'PR', variables: {}, steps: [work, pullRequestStep({ account })] });
    const run = await factory.call('startRun', { pipelineId: pipeline.id, issue: { title: 'Crash-proof widgets' } });
    await waitFor(() => fake.pulls(repository).length === 1, 10_000, 'GitHub to create the pull request');
    await factory.kill('SIGKILL');
    release();

    factory = await startChildFactory(childPath, data);
    const interrupted = (await factory.call('getRun', run.id))!;
    assert.is(interrupted.status, 'failed');
    assert.is(interrupted.steps[1]!.pullRequest, undefined, 'Factory never learnt of it');
    await factory.call('retryRun', run.id, 'pr');
    let done: Run | undefined;
    await waitFor(async () => {
      done = (await factory!.call('getRun', run.id))!;
      return done.status === 'succeeded' || done.status === 'failed';
    }, 10_000, 'the retry to finish');
    assert.is(done!.status, 'succeeded', done!.error);
    assert.is(fake.pulls(repository).length, 1, 'one pull request');
    assert.is(done!.steps[1]!.pullRequest!.number, fake.pulls(repository)[0]!.number);
    assert.is(fake.callsTo('POST', `/repos/${repository}/pulls`).length, 1, 'never created twice');
  } finally {
    release?.();
    await factory?.kill('SIGKILL');
    await fake.stop();
    removeTempDir(dir);
  }
});

crash.run();
