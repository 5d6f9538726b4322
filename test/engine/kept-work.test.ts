// Workspaces that never lose work, with real git repositories in temporary folders and a real
// Factory: deleting a run keeps what its worktree held, retention removes old worktree folders and
// keeps their branches, a retry brings the files back, and nothing Factory did not make is touched.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from '../helpers/assert';
import { shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

interface Context {
  dir: string;
  repository: string;
  factory: TestFactory;
  projectId: string;
}

const kept = suite<Context>('kept work');
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { env: gitEnv, encoding: 'utf8' }).trim();
}

kept.before.each(async (context) => {
  context.dir = makeTempDir('factory-kept');
  context.repository = join(context.dir, 'repo');
  mkdirSync(context.repository);
  git(context.repository, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(context.repository, 'README.md'), 'hello\n');
  writeFileSync(join(context.repository, '.gitignore'), 'node_modules/\n');
  git(context.repository, 'add', '.');
  git(context.repository, 'commit', '--quiet', '-m', 'first');
  context.factory = await startTestFactory({ dir: join(context.dir, 'data') });
  context.projectId = (await context.factory.api.saveProject({ name: 'Repo', path: context.repository, worktrees: true })).id;
});
kept.after.each(async (context) => {
  await context.factory.close();
  removeTempDir(context.dir);
});

/** Runs one shell step in a fresh worktree run of the project; resolves with the finished run. */
async function runIn(context: Context, command: string, title = 'Fix the login page') {
  const pipeline = await context.factory.api.savePipeline({ projectId: context.projectId, name: `P ${Math.random()}`, variables: {}, steps: [shell('work', command)] });
  const run = await context.factory.api.startRun({ pipelineId: pipeline.id, issue: { title } });
  const done = await context.factory.waitForRun(run.id, ['succeeded', 'failed']);
  assert.is(done.status, 'succeeded', done.error);
  return done;
}

const commit = 'git add -A && git -c user.name=Agent -c user.email=agent@example.com commit --quiet -m';

kept('deleting a run keeps its branch when its commits are nowhere else, and says so', async (context) => {
  const run = await runIn(context, `echo change > feature.txt && ${commit} one && echo more >> feature.txt && ${commit} two && echo three > third.txt && ${commit} three`);
  assert.equal((await context.factory.api.listRunBranches(context.projectId)).map(({ branch, inUse }) => ({ branch, inUse })), [{ branch: `factory/${run.id}`, inUse: true }], 'a run with its worktree is using its branch');
  const said = await context.factory.api.deleteRun(run.id);
  assert.is(said, `kept branch factory/${run.id} (3 commits not merged anywhere)`);
  assert.not.ok(existsSync(run.workspace!), 'the worktree folder is gone');
  assert.is(git(context.repository, 'show', `factory/${run.id}:feature.txt`), 'change\nmore');
  const branches = await context.factory.api.listRunBranches(context.projectId);
  assert.equal(branches.map(({ branch, runId, ahead, pushed, inUse }) => ({ branch, runId, ahead, pushed, inUse })), [{ branch: `factory/${run.id}`, runId: run.id, ahead: 3, pushed: false, inUse: false }]);
});

kept('uncommitted and untracked files survive as one commit named for the run; ignored files do not', async (context) => {
  const run = await runIn(context, 'echo edited >> README.md && echo new > untracked.txt && mkdir -p node_modules && echo big > node_modules/dep.js');
  const said = await context.factory.api.deleteRun(run.id);
  assert.is(said, `uncommitted work committed; kept branch factory/${run.id} (1 commit not merged anywhere)`);
  assert.is(git(context.repository, 'log', '-1', '--format=%s', `factory/${run.id}`), `Factory: uncommitted work of ${run.id} (Fix the login page)`);
  assert.is(git(context.repository, 'show', `factory/${run.id}:untracked.txt`), 'new');
  assert.is(git(context.repository, 'show', `factory/${run.id}:README.md`), 'hello\nedited');
  assert.not.ok(git(context.repository, 'ls-tree', '-r', '--name-only', `factory/${run.id}`).includes('node_modules'));
});

kept('a branch whose commits are all on another branch is deleted; deleteRunBranches deletes merged ones and named ones', async (context) => {
  const merged = await runIn(context, `echo merged > merged.txt && ${commit} merged`);
  git(context.repository, 'merge', '--quiet', '--ff-only', `factory/${merged.id}`);
  assert.is(await context.factory.api.deleteRun(merged.id), `deleted branch factory/${merged.id} (all its commits are on other branches)`);
  assert.is(git(context.repository, 'branch', '--list', `factory/${merged.id}`), '');

  const unmerged = await runIn(context, `echo mine > mine.txt && ${commit} mine`);
  const clean = await runIn(context, 'true');
  await context.factory.api.deleteRun(unmerged.id);
  await rejects(context.factory.api.deleteRunBranches(context.projectId, `factory/${clean.id}`), /still has its worktree/);
  assert.equal(await context.factory.api.deleteRunBranches(context.projectId, 'merged'), [], 'the clean run keeps its worktree, and the unmerged branch has work');
  assert.equal(await context.factory.api.deleteRunBranches(context.projectId, `factory/${unmerged.id}`), [`factory/${unmerged.id}`]);
  await rejects(context.factory.api.deleteRunBranches(context.projectId, 'main'), /has no run branch `main`/);
  assert.is(git(context.repository, 'branch', '--list', 'main'), '* main', 'the user’s branch is untouched');
});

kept('retention removes old worktree folders and keeps their branches; a retry makes the worktree again from the branch', async (context) => {
  await context.factory.close();
  let offset = 0;
  const clock = () => Date.now() + offset;
  context.factory = await startTestFactory({ dir: join(context.dir, 'data'), now: clock });
  await context.factory.api.saveSettings({ worktreeRetentionDays: 7 });
  // The first time it makes the files; a retry that finds them (from the kept branch) says so.
  const old = await runIn(context, `if [ -f work.txt ]; then echo found > found.txt; else echo work > work.txt && ${commit} work && echo draft > draft.txt; fi`);
  assert.ok(existsSync(join(old.workspace!, 'draft.txt')));
  await context.factory.close();
  offset = 8 * 24 * 3600_000;
  context.factory = await startTestFactory({ dir: join(context.dir, 'data'), now: clock });
  const young = await runIn(context, 'echo young > young.txt');
  await waitFor(async () => (await context.factory.api.getRun(old.id))?.branch !== undefined, 10_000, 'the old worktree to be removed');
  const retired = (await context.factory.api.getRun(old.id))!;
  assert.equal([retired.workspace, retired.branch], [undefined, `factory/${old.id}`]);
  assert.not.ok(existsSync(old.workspace!), 'the folder is gone');
  assert.ok(existsSync(join(young.workspace!, 'young.txt')), 'a recent run keeps its worktree');
  assert.ok((await context.factory.api.readRunLog(old.id)).some((line) => /^Worktree removed after 7 days: uncommitted work committed; kept branch/.test(line.line)));

  await context.factory.api.retryRun(old.id);
  const again = await context.factory.waitForRun(old.id, ['succeeded', 'failed']);
  assert.is(again.status, 'succeeded', again.error);
  assert.is(again.branch, undefined);
  assert.is(readFileSync(join(again.workspace!, 'work.txt'), 'utf8'), 'work\n', 'the committed work is back');
  assert.is(readFileSync(join(again.workspace!, 'draft.txt'), 'utf8'), 'draft\n', 'and what was uncommitted');
  assert.ok(existsSync(join(again.workspace!, 'found.txt')), 'the retried step found them there');
});

kept('a worktree that is not Factory’s is left alone, and a project folder that vanished does not crash the deletion', async (context) => {
  const run = await runIn(context, `echo x > x.txt && ${commit} x`);
  // Someone replaced the run's worktree by a worktree of their own on another branch.
  git(context.repository, 'worktree', 'remove', '--force', run.workspace!);
  git(context.repository, 'worktree', 'add', '--quiet', '-b', 'theirs', run.workspace!);
  writeFileSync(join(run.workspace!, 'theirs.txt'), 'precious\n');
  const said = await context.factory.api.deleteRun(run.id);
  assert.match(said!, /was left in place: The worktree was not removed: .* is not the worktree Factory made/);
  assert.is(readFileSync(join(run.workspace!, 'theirs.txt'), 'utf8'), 'precious\n');
  assert.ok(git(context.repository, 'rev-parse', '--verify', 'theirs'), 'their branch is there');

  const lost = await runIn(context, 'echo y > y.txt');
  rmSync(context.repository, { recursive: true, force: true });
  const gone = await context.factory.api.deleteRun(lost.id);
  assert.match(gone!, /was left in place: The project folder .* is gone: the worktree .* stays where it is/);
  assert.ok(existsSync(join(lost.workspace!, 'y.txt')), 'the only copy of the work stays');
  assert.equal(await context.factory.api.listRunBranches(context.projectId), []);
});

kept.run();
